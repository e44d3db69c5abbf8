"""The report's document model, its charts and tables, JUnit files and the rendered docs."""

from ..reports import calendar, docsite, junit, render, svg
from ..reports.audit_page import groups
from ..reports.document import (BETTER, FAIL, NA, WARN, Bullets, Cell, Figure, Figures, Para,
                                Section, Table, exact, mark, num)
from ..reports.junit import Case, document
from ..reports.svg import SVG_NS, Band, Marks, Series, line_chart
from ..reports.tables import Col, by_group, row_blocks, row_table

__all__ = ["BETTER", "FAIL", "NA", "SVG_NS", "WARN", "Band", "Bullets", "Case", "Cell", "Col",
           "Figure", "Figures", "Marks", "Para", "Section", "Series", "Table", "by_group",
           "calendar", "docsite", "document", "exact", "groups", "junit", "line_chart", "mark",
           "num", "render", "row_blocks", "row_table", "svg"]
