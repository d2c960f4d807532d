"""The batch-size optimizer (Zeus's ``zeus.optimizer.batch_size``).

A recurring training job asks a batch-size optimizer service (``zeus
bso-server``, or Zeus's own server: the REST API is the same) for the batch
size of each run, reports after every evaluation, and is told when to stop::

    from zeus.monitor import ZeusMonitor
    from zeus.optimizer.batch_size import BatchSizeOptimizer, JobSpec

    monitor = ZeusMonitor()
    job = JobSpec(job_id_prefix="mnist", batch_sizes=[32, 64, 128, 256], default_batch_size=64)
    bso = BatchSizeOptimizer(monitor=monitor, server_url="http://127.0.0.1:8000", job=job)
    batch_size = bso.get_batch_size()
    bso.on_train_begin()
    for epoch in range(job.max_epochs):
        train_one_epoch(batch_size)
        bso.on_evaluate(evaluate())      # raises ZeusBSOTrainFailError if the run cannot converge
        if bso.training_finished:
            break

``BatchSizeOptimizer`` is in :mod:`.client`, ``JobSpec`` in :mod:`.common`
and the exceptions in :mod:`.exceptions`, as in Zeus.
"""

from zeus.optimizer.batch_size.client import BatchSizeOptimizer
from zeus.optimizer.batch_size.common import CreatedJob, JobSpec

__all__ = ["BatchSizeOptimizer", "CreatedJob", "JobSpec"]
