"""Utilities: framework helpers (``zeus.utils.framework``), metrics (``zeus.utils.metric``), learning-rate
scaling (``zeus.utils.lr_scaler``) and typed environment variables (``zeus.utils.env``)."""
