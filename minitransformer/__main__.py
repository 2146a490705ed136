"""`python -m minitransformer ...` is the `minitransformer` command."""
import sys

from minitransformer.cli import main

sys.exit(main())
