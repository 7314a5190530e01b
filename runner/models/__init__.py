"""Model clients, one kind a module; runner/models/kinds.py registers the kinds and builds the
`Model` a MODEL spec names. The package itself imports nothing, so a paradigm that needs only
the Model contract (runner/models/base.py) does not load every kind's builder with it.
"""
