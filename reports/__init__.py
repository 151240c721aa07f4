"""Tables, error breakdowns and plots of a run; Markdown, CSV and a self-contained HTML page."""
