"""Inspect's entry point (`[project.entry-points.inspect_ai]`): what `benchaudit/...` names."""

from .comtradebench import comtrade_agent, comtradebench, f1, judge

__all__ = ["comtradebench", "comtrade_agent", "f1", "judge"]
