"""Tests of the dataset readers, on miniature native-layout copies (fixtures.py)."""
