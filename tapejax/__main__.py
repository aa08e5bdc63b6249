"""`python -m tapejax`: the tour of the guides' examples."""

import sys

from tapejax.tour import main

sys.exit(main())
