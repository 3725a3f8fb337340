"""Correlation analysis: one timeline, SLA breach, drift and the ranking of suspects."""

from correlator.analysis.breach import SlaMatchError
from correlator.analysis.config import Config
from correlator.analysis.pipeline import AnalysisError, analyze

__all__ = ["AnalysisError", "Config", "SlaMatchError", "analyze"]
