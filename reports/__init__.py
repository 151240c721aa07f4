"""Tables, error breakdowns and plots of a run; Markdown, CSV and a self-contained HTML page.

    report = build_report([run_dir], compare=[other_run_dir])   # values only, read from the results stores
    files = write_report(report, out)                          # report.md, report.html, csv/, plots/
"""

from reports.build import Report, Section, build_report
from reports.write import write_report

__all__ = ["Report", "Section", "build_report", "write_report"]
