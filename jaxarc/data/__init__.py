"""ARC task data: parsing, the padded task bank, bundled and user sources."""

from jaxarc.data.bank import DEFAULT_CANVAS, PAD_VALUE, TaskBank, TaskIds
from jaxarc.data.cache import cache_root, clear_bank_cache
from jaxarc.data.errors import LoadReport, SkippedTask, TaskFormatError
from jaxarc.data.fetch import DATASETS, FetchableDataset, FetchError, fetch_dataset
from jaxarc.data.info import BankSummary, summarize_bank
from jaxarc.data.loading import (
    BUNDLED_SOURCES,
    list_sources,
    load_bank,
    load_bank_with_report,
    load_source,
    source_task_count,
)
from jaxarc.data.parsing import ParsedTask, parse_grid, parse_task
from jaxarc.data.source import AbstractTaskSource, Task
from jaxarc.data.stacking import bank_from_tasks, bank_to_json, task_to_json

__all__ = [
    "BUNDLED_SOURCES",
    "DATASETS",
    "DEFAULT_CANVAS",
    "PAD_VALUE",
    "AbstractTaskSource",
    "BankSummary",
    "FetchError",
    "FetchableDataset",
    "LoadReport",
    "ParsedTask",
    "SkippedTask",
    "Task",
    "TaskBank",
    "TaskFormatError",
    "TaskIds",
    "bank_from_tasks",
    "bank_to_json",
    "cache_root",
    "clear_bank_cache",
    "fetch_dataset",
    "list_sources",
    "load_bank",
    "load_bank_with_report",
    "load_source",
    "parse_grid",
    "parse_task",
    "source_task_count",
    "summarize_bank",
    "task_to_json",
]
