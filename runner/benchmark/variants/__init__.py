"""Leak-resistant variants: transformations of an instance's inputs that keep its task meaningful,
with the ground truth recomputed (`eegbench truth --variants K --seed S`)."""
