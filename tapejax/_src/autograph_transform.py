"""AutoGraph's source transformation: a function's `def` rewritten so that its control flow calls `ag__`.

`if`/`while`/`for` statements become calls of `ag__.if_stmt` / `while_stmt` / `for_stmt` (autograph_operators.py),
with their bodies as functions of the variables they assign; `and`/`or`/`not` become `and_` / `or_` / `not_`;
`return`, `break` and `continue` inside converted blocks become flags that guard the statements after them; user
calls go through `ag__.converted_call`. This module only rewrites syntax trees: autograph.py parses a function's
source, runs the `Converter` over it and compiles the result.
"""

from __future__ import annotations

import ast
import copy
import itertools
import textwrap
from collections.abc import Sequence
from typing import Any

_counter = itertools.count()


# -- the source transformation ---------------------------------------------------------------------------------


def _stores(nodes: Sequence[ast.AST]) -> list[str]:
    """Names a block assigns, in order (not inside nested functions or classes)."""
    names: dict[str, None] = {}
    for node in nodes:
        for n in _walk_local(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.setdefault(n.id)
            elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.setdefault(n.name)
    return list(names)


def _loads(nodes: Sequence[ast.AST]) -> set[str]:
    """Names a block reads; `x += 1` reads x too (its Name is a Store)."""
    return {n.id for node in nodes for n in _walk_local(node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)} | {
        n.target.id for node in nodes for n in _walk_local(node)
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}


def _walk_local(node: ast.AST):
    """ast.walk that does not enter nested function or class bodies (their names are their own)."""
    yield node
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda) and not getattr(
            node, "_ag_root", False):
        return
    for child in ast.iter_child_nodes(node):
        yield from _walk_local(child)


def _loads_before_store(body: Sequence[ast.stmt]) -> set[str]:
    """Names a loop body reads before assigning them (values carried from the previous iteration)."""
    stored: set[str] = set()
    carried: set[str] = set()
    for stmt in body:
        carried |= _loads([stmt]) - stored
        stored |= set(_stores([stmt]))
    return carried


def _parse_stmts(text: str, **names: Any) -> list[ast.stmt]:
    return ast.parse(textwrap.dedent(text).format(**names)).body


def _tuple(names: Sequence[str], ctx: ast.expr_context) -> ast.Tuple:
    return ast.Tuple([ast.Name(n, ctx) for n in names], ctx)


def _ld_tuple(names: Sequence[str]) -> ast.Tuple:
    return ast.Tuple([ast.parse(f"ag__.ld(lambda: {n}, {n!r})", mode="eval").body for n in names], ast.Load())


def _func(name: str, params: Sequence[str], body: list[ast.stmt], returns: Sequence[str]) -> ast.FunctionDef:
    body = [*body, ast.Return(_tuple(returns, ast.Load()))]
    return ast.FunctionDef(name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params],
                                                         kwonlyargs=[], kw_defaults=[], defaults=[]),
                           body=body, decorator_list=[], returns=None, type_params=[])


def _contains(nodes: Sequence[ast.AST], kinds: tuple[type, ...], loops: bool = True) -> bool:
    """Whether a block holds a statement of `kinds` (not in nested functions; not in nested loops if not
    `loops`: a break belongs to its innermost loop)."""
    for node in nodes:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, kinds):
                return True
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                continue
            if not loops and isinstance(n, ast.For | ast.While):
                continue
            stack.extend(ast.iter_child_nodes(n))
    return False


class Converter:
    """Rewrites one function. Statement lists are processed in order, so a flag set by `return`/`break`/
    `continue` guards the statements after it."""

    def __init__(self, line_offset: int = 0):
        self.line_offset = line_offset  # the function's first line in its file: errors name file lines

    def line(self, stmt: ast.stmt) -> ast.Constant:
        return ast.Constant(stmt.lineno + self.line_offset)

    def visit_function(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node._ag_root = True  # type: ignore[attr-defined]
        body = node.body
        if _contains(body, (ast.Return,)) and _returns_nested(body):
            body = self._lower_returns(_early_returns_to_else(body))
        self.function_loads = _loads(body)
        node.body = self.block(body, set())
        return node

    # returns nested in control flow: `ag__retval` and a `ag__do_return` flag guarding what follows
    def _lower_returns(self, body: list[ast.stmt]) -> list[ast.stmt]:
        class Returns(ast.NodeTransformer):
            def visit_FunctionDef(self, n: ast.AST) -> ast.AST:
                return n

            visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

            def visit_Return(self, n: ast.Return) -> list[ast.stmt]:
                value = n.value or ast.Constant(None)
                return [ast.copy_location(ast.Assign([ast.Name("ag__retval", ast.Store())], value), n),
                        ast.copy_location(ast.Assign([ast.Name("ag__do_return", ast.Store())], ast.Constant(True)),
                                          n)]

        lowered: list[ast.stmt] = []
        for s in body:  # a statement may become two (a top-level return): NodeTransformer then gives a list
            out = Returns().visit(s)
            lowered.extend(out if isinstance(out, list) else [out])
        start = _parse_stmts("ag__do_return = False\nag__retval = ag__.Undefined('ag__retval')")
        return [*start, *_guard(lowered, "ag__do_return"), *_parse_stmts("return ag__.retval(ag__retval)")]

    def block(self, stmts: list[ast.stmt], live_after: set[str]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, stmt in enumerate(stmts):
            later = live_after | _loads(stmts[i + 1:])
            out.extend(self.statement(stmt, later))
        return out

    def statement(self, stmt: ast.stmt, live_after: set[str]) -> list[ast.stmt]:
        if isinstance(stmt, ast.If):
            return self.convert_if(stmt, live_after)
        if isinstance(stmt, ast.While) and not stmt.orelse:
            return self.convert_while(stmt, live_after)
        if isinstance(stmt, ast.For) and not stmt.orelse:
            return self.convert_for(stmt, live_after)
        if isinstance(stmt, ast.FunctionDef):
            return [Converter(self.line_offset).visit_function(stmt)]
        if isinstance(stmt, ast.With):  # `with tf.GradientTape() as tape:` blocks hold most control flow
            stmt.items = [_Expressions(self.line_offset).visit(item) for item in stmt.items]
            stmt.body = self.block(stmt.body, live_after)
            return [stmt]
        if isinstance(stmt, ast.Try):
            stmt.body = self.block(stmt.body, live_after)
            for handler in stmt.handlers:
                handler.body = self.block(handler.body, live_after)
            stmt.orelse = self.block(stmt.orelse, live_after)
            stmt.finalbody = self.block(stmt.finalbody, live_after)
            return [stmt]
        return [_Expressions(self.line_offset).visit(stmt)]

    def _assign(self, stmt: ast.stmt, outputs: Sequence[str], call: ast.Call) -> list[ast.stmt]:
        """`outputs = call`, then each output the construct left unassigned deleted again, so that reading it
        raises UnboundLocalError as in Python (a Python `if` that did not assign it)."""
        if not outputs:
            return [ast.Expr(call)]
        out: list[ast.stmt] = [ast.Assign([_tuple(outputs, ast.Store())], call)]
        for name in outputs:
            if not name.startswith("ag__"):
                out.extend(_parse_stmts(f"if ag__.is_undefined({name}):\n    del {name}"))
        return out

    def convert_if(self, stmt: ast.If, live_after: set[str]) -> list[ast.stmt]:
        k = next(_counter)
        modified = _stores(stmt.body + stmt.orelse)
        outputs = [n for n in modified if n in live_after or n.startswith("ag__")]
        read_first = _loads_before_store(stmt.body) | _loads_before_store(stmt.orelse)
        params = outputs + [n for n in modified if n in read_first and n not in outputs]
        body = self.block(stmt.body, live_after | set(outputs))
        orelse = self.block(stmt.orelse, live_after | set(outputs)) or [ast.Pass()]
        true_fn = _func(f"ag__if_true_{k}", params, body, outputs)
        false_fn = _func(f"ag__if_false_{k}", params, orelse, outputs)
        test = _Expressions(self.line_offset).visit(stmt.test)
        call = _ag_call("if_stmt", [test, ast.Name(true_fn.name, ast.Load()), ast.Name(false_fn.name, ast.Load()),
                         _ld_tuple(params), ast.Constant(tuple(params)), self.line(stmt)])
        return [ast.copy_location(n, stmt) for n in (true_fn, false_fn, *self._assign(stmt, outputs, call))]

    def _loop_body(self, body: list[ast.stmt], k: int) -> tuple[list[ast.stmt], list[str]]:
        """A loop body with `break`/`continue` lowered to flags of this loop (`ag__break_<k>`, reset by the
        loop; `ag__continue_<k>`, reset by each iteration) guarding what follows them, and the flags that end
        the loop: its break flag, and `ag__do_return` when a return inside sets it."""
        body = copy.deepcopy(body)  # the statement itself stays as written
        if _contains(body, (ast.Continue,), loops=False):
            flag = f"ag__continue_{k}"
            body = [*_parse_stmts(f"{flag} = False"), *_guard(_lower_jump(body, ast.Continue, flag), flag)]
        exits = []
        if _contains(body, (ast.Break,), loops=False):
            flag = f"ag__break_{k}"
            body = _guard(_lower_jump(body, ast.Break, flag), flag)
            exits.append(flag)
        if _sets(body, "ag__do_return"):
            exits.append("ag__do_return")
        return body, exits

    def _loop_vars(self, body: list[ast.stmt], carried: set[str], exits: Sequence[str],
                   exclude: Sequence[str] = ()) -> list[str]:
        modified = [n for n in _stores(body) if n not in exclude]
        return [n for n in modified if (n in carried or n in exits or n.startswith("ag__"))
                and not n.startswith("ag__continue_")]

    def convert_while(self, stmt: ast.While, live_after: set[str]) -> list[ast.stmt]:
        k = next(_counter)
        body, exits = self._loop_body(stmt.body, k)
        test_expr = stmt.test
        for flag in exits:  # checked before the test, as `break` skips it
            test_expr = ast.BoolOp(ast.And(), [ast.UnaryOp(ast.Not(), ast.Name(flag, ast.Load())), test_expr])
        carried = _loads([stmt.test]) | _loads_before_store(body) | live_after
        loop_vars = self._loop_vars(body, carried, exits)
        body = self.block(body, set(loop_vars) | live_after)
        test_fn = _func(f"ag__test_{k}", loop_vars, [], [])
        test_fn.body = [ast.Return(_Expressions(self.line_offset).visit(test_expr))]
        body_fn = _func(f"ag__body_{k}", loop_vars, body, loop_vars)
        init = [ast.Assign([ast.Name(f, ast.Store())], ast.Constant(False)) for f in exits if f != "ag__do_return"]
        call = _ag_call("while_stmt", [ast.Name(test_fn.name, ast.Load()), ast.Name(body_fn.name, ast.Load()),
                         _ld_tuple(loop_vars), ast.Constant(tuple(loop_vars)), self.line(stmt)])
        return [ast.copy_location(n, stmt) for n in (*init, test_fn, body_fn, *self._assign(stmt, loop_vars, call))]

    def convert_for(self, stmt: ast.For, live_after: set[str]) -> list[ast.stmt]:
        k = next(_counter)
        body, exits = self._loop_body(stmt.body, k)
        target = stmt.target
        carried = _loads_before_store(body) | live_after
        loop_vars = self._loop_vars(body, carried, exits, exclude=_stores([target]))
        body = self.block(body, set(loop_vars) | live_after)
        unpack = ast.Assign([target], ast.Name("ag__item", ast.Load()))
        body_fn = _func(f"ag__for_body_{k}", ["ag__item", *loop_vars], [unpack, *body], loop_vars)
        defs: list[ast.stmt] = [body_fn]
        extra_test: ast.expr = ast.Constant(None)
        if exits:  # the loop goes on while no exit flag is set (TF's extra_test)
            test_expr = ast.BoolOp(ast.And(), [ast.UnaryOp(ast.Not(), ast.Name(f, ast.Load())) for f in exits]) \
                if len(exits) > 1 else ast.UnaryOp(ast.Not(), ast.Name(exits[0], ast.Load()))
            test_fn = _func(f"ag__for_test_{k}", loop_vars, [], [])
            test_fn.body = [ast.Return(_Expressions(self.line_offset).visit(test_expr))]
            defs.insert(0, test_fn)
            extra_test = ast.Name(test_fn.name, ast.Load())
        is_range = _is_range(stmt.iter)
        iterable = _Expressions(self.line_offset).visit(stmt.iter)
        if is_range:
            iterable = _ag_call("range_", [iterable.func, *iterable.args])
        init = [ast.Assign([ast.Name(f, ast.Store())], ast.Constant(False)) for f in exits if f != "ag__do_return"]
        call = _ag_call("for_stmt", [iterable, extra_test, ast.Name(body_fn.name, ast.Load()),
                                     _ld_tuple(loop_vars), ast.Constant(tuple(loop_vars)), self.line(stmt)])
        return [ast.copy_location(n, stmt) for n in (*init, *defs, *self._assign(stmt, loop_vars, call))]


def _guard(stmts: list[ast.stmt], flag: str) -> list[ast.stmt]:
    """`s1; s2; ...` -> `s1; if not flag: s2; ...` after each statement that may set `flag`, at every depth:
    inside an `if` (or a loop, for the return flag) the statements after the one setting it are guarded too."""
    out: list[ast.stmt] = []
    for i, s in enumerate(stmts):
        _guard_inside(s, flag)
        out.append(s)
        if _sets([s], flag) and i + 1 < len(stmts):
            guard = ast.If(test=ast.UnaryOp(ast.Not(), ast.Name(flag, ast.Load())),
                           body=_guard(stmts[i + 1:], flag), orelse=[])
            out.append(ast.copy_location(guard, stmts[i + 1]))
            break
    return out


def _guard_inside(stmt: ast.stmt, flag: str) -> None:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return
    for field in ("body", "orelse", "finalbody"):
        block = getattr(stmt, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            setattr(stmt, field, _guard(block, flag))
    for handler in getattr(stmt, "handlers", []):
        handler.body = _guard(handler.body, flag)


def _is_range(node: ast.expr) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Name) and func.id == "range") or (
        isinstance(func, ast.Attribute) and func.attr == "range")


def _sets(body: Sequence[ast.stmt], flag: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == flag and isinstance(n.ctx, ast.Store)
               for s in body for n in _walk_local(s))


def _returns_nested(body: Sequence[ast.stmt]) -> bool:
    """Whether a `return` sits inside an if/while/for (a top-level return needs no rewriting)."""
    return any(isinstance(s, ast.If | ast.While | ast.For | ast.With | ast.Try) and _contains([s], (ast.Return,))
               for s in body)


def _ends_with_return(body: Sequence[ast.stmt]) -> bool:
    last = body[-1] if body else None
    return isinstance(last, ast.Return) or (isinstance(last, ast.If) and _ends_with_return(last.body)
                                            and _ends_with_return(last.orelse))


def _early_returns_to_else(body: list[ast.stmt]) -> list[ast.stmt]:
    """`if c: ...; return a` + rest  ->  `if c: ...; return a` / `else: rest` (and the same with the branches
    swapped): both branches then return, so a tensor condition gives both branches a value to return."""
    out: list[ast.stmt] = []
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.If):
            stmt.body = _early_returns_to_else(stmt.body)
            stmt.orelse = _early_returns_to_else(stmt.orelse)
            if i + 1 < len(body) and _ends_with_return(stmt.body) and not _ends_with_return(stmt.orelse):
                stmt.orelse = _early_returns_to_else(stmt.orelse + body[i + 1:])
                out.append(stmt)
                return out
            if i + 1 < len(body) and _ends_with_return(stmt.orelse) and not _ends_with_return(stmt.body):
                stmt.body = _early_returns_to_else(stmt.body + body[i + 1:])
                out.append(stmt)
                return out
        out.append(stmt)
    return out


def _lower_jump(body: list[ast.stmt], kind: type, flag: str) -> list[ast.stmt]:
    class Jumps(ast.NodeTransformer):
        def visit_FunctionDef(self, n: ast.AST) -> ast.AST:
            return n

        visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_For = visit_While = visit_FunctionDef

        def generic_visit(self, n: ast.AST) -> Any:
            if isinstance(n, kind):
                return ast.copy_location(ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(True)), n)
            return super().generic_visit(n)

    return [Jumps().visit(s) for s in body]


class _Expressions(ast.NodeTransformer):
    """`and`/`or`/`not` to ag__ calls, user calls through `converted_call` (expressions only)."""

    def __init__(self, line_offset: int):
        self.line_offset = line_offset

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return Converter(self.line_offset).visit_function(node)

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        name = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _ag_call(name, [_thunk(value), _thunk(result)])
        return ast.copy_location(result, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_ag_call("not_", [node.operand]), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ("print", "super", "range", "len", "isinstance"):
            return node
        node.func = _ag_call("converted_call", [node.func])
        return node


def _ag_call(name: str, args: list[ast.expr]) -> ast.Call:
    """`ag__.<name>(*args)`: a call of the run-time operators (autograph_operators.py)."""
    return ast.Call(ast.Attribute(ast.Name("ag__", ast.Load()), name, ast.Load()), args, [])


def _thunk(expr: ast.expr) -> ast.Lambda:
    return ast.Lambda(ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), expr)
