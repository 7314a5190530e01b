"""Reports: turn one or many run directories into tables, figures, exports."""
