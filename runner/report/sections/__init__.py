"""The report's sections: each module turns a ReportContext into tables (and nothing else)."""
