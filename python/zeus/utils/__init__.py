"""Utilities: framework helpers (``zeus.utils.framework``) and metrics (``zeus.utils.metric``)."""
