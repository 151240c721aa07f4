"""report.md keeps untrusted text inert in table titles too (a model label reaches TravelPlanner's Table 4 titles)."""

from __future__ import annotations

from reports.markdown import markdown_table
from reports.table import Column, Table

LABEL = '<img src=x onerror="alert(1)"> [a](b) *b*'


def test_a_table_title_holding_a_model_label_is_shown_as_text() -> None:
    table = Table("constraints", f"Constraint pass rates, {LABEL} / direct (paper Table 4, %)", (Column("model"),),
                  [(LABEL,)])
    heading = markdown_table(table).splitlines()[0]
    assert heading == ('### Constraint pass rates, &lt;img src=x onerror="alert(1)"&gt; \\[a\\](b) \\*b\\* / direct '
                       "(paper Table 4, %)")
