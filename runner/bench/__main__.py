"""`python -m runner.bench`: every measurement of `make bench`."""
from runner.bench.measure import main

main()
