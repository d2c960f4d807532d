"""Optimizers: the power-limit optimizer (``zeus.optimizer.power_limit``) and the batch-size optimizer
(``zeus.optimizer.batch_size``)."""
