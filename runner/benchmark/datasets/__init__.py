"""Local datasets: readers of public EEG datasets in their native layouts, and the binder that
ties the task library to them (`eegbench truth --dataset NAME --root PATH`)."""
