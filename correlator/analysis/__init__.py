"""Correlation analysis: one timeline, SLA breach, drift and the ranking of suspects."""

from correlator.analysis.breach import SlaMatchError
from correlator.analysis.config import Config
from correlator.analysis.pipeline import AnalysisError, analyze, run_analysis
from correlator.analysis.result import AnalysisResult

__all__ = [
    "AnalysisError",
    "AnalysisResult",
    "Config",
    "SlaMatchError",
    "analyze",
    "run_analysis",
]
