"""`python -m tapejax`: the tour of the guides' examples; `python -m tapejax SCRIPT.py [ARGS...]` runs an
unchanged TensorFlow script on tapejax; `python -m tapejax --coverage` lists the TF symbols tapejax has."""

import sys

args = sys.argv[1:]
if not args:
    from tapejax.tour import main

    sys.exit(main())
elif args[0] == "--coverage":
    from tapejax.coverage import main

    sys.exit(main(args[1:]))
elif args[0] in ("-h", "--help"):
    print(__doc__)
else:
    from tapejax.runner import run_script

    sys.exit(run_script(args[0], args[1:]))
