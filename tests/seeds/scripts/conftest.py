"""The scripts here are the guides' code, run by ../test_scripts.py in subprocesses; importing one runs it, so
pytest (its doctest collection) must not import them."""

collect_ignore_glob = ["*.py"]
