"""Model clients, one kind a module; runner/models/kinds.py builds the `Model` a MODEL spec
names (runner/models/spec.py). The package itself imports nothing, so a paradigm that needs
only the Model contract (runner/models/base.py) does not load every kind's builder with it.
"""
