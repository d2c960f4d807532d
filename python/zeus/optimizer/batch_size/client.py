"""The batch-size optimizer's training-loop client (Zeus's ``zeus.optimizer.batch_size.client``).

``BatchSizeOptimizer`` is a thin layer over the native ``zeus::BatchSizeOptimizer``
(``include/zeus/runtime/batch_size_optimizer.h``): the REST calls, their
timeouts and retries, the measurement windows and the bookkeeping are native.
Every call that talks to the service releases the GIL. What is Python's here:
Zeus's exceptions for rank and convergence, and ``torch.distributed``.

Differences from Zeus, on purpose:

* If the process ends (SIGINT, SIGTERM, normal exit) or the optimizer is
  garbage-collected before the run's final report, the trial is marked failed on
  the service, so that its batch size is explored again (Zeus did this at exit
  only).
* ``on_epoch_end()`` pauses the measurement until ``on_evaluate()``, so the
  evaluation is not charged to the batch size (Zeus charged it). Calling it is
  optional; without it the cost is Zeus's.
* The measurement window is opened on the monitor's native engine directly,
  named ``zeus_batch_size_optimizer`` (Zeus: ``BatciSizeOptimizerClient``),
  after synchronising the framework as ``ZeusMonitor.begin_window`` would; the
  monitor's ``log_file`` does not record it.
* ``get_batch_size(broadcast=True)`` gives every rank of a ``torch.distributed``
  job rank 0's batch size (see the class docstring).
"""

from __future__ import annotations

import logging
from typing import Any, Optional

from zeus import _native
from zeus import exception as _exceptions
from zeus.exception import (
    ZeusBaseError,
    ZeusBSOBadOperationError,
    ZeusBSOConfigError,
    ZeusBSOOperationOrderError,
    ZeusBSORuntimError,
    ZeusBSOTrainFailError,
)
from zeus.optimizer.batch_size.common import CreatedJob, JobSpec
from zeus.utils import framework

logger = logging.getLogger(__name__)


class BatchSizeOptimizer:
    """Asks the batch-size optimizer service for the batch size of this run of a recurring job, and reports.

    The constructor registers the job with the service (on rank 0), with the GPU configuration of the GPUs
    ``monitor`` measures (the largest power limit in W, floored, times their number; their model).

    Usage, in every run of the job::

        bso = BatchSizeOptimizer(monitor=monitor, server_url="http://127.0.0.1:8000", job=job)
        batch_size = bso.get_batch_size()
        bso.on_train_begin()
        for epoch in range(job.max_epochs):
            train_one_epoch(batch_size)
            bso.on_evaluate(validation_metric)   # ZeusBSOTrainFailError if the run failed to converge
            if bso.training_finished:
                break

    Distributed training (``torch.distributed``): only rank 0 talks to the service. Either

    * as in Zeus, rank 0 calls ``get_batch_size()`` and you copy its ``current_batch_size`` and
      ``trial_number`` to the other ranks' optimizers (``bso.current_batch_size = ...``); the job must then have
      a ``job_id``, so that every rank knows the job; or
    * every rank calls ``get_batch_size(broadcast=True)``: rank 0 asks the service and its batch size, trial
      number and job id (or its error) are broadcast with ``torch.distributed``, so every rank returns the same
      batch size (or raises the same exception class).

    Every rank then calls ``on_train_begin()`` and ``on_evaluate()`` and reports its own measurement, as in Zeus:
    the first final report ends the trial and the others get its recorded outcome ("already reported"), so all
    ranks stop together and raise ``ZeusBSOTrainFailError`` together.

    Args:
        monitor: the ``zeus.monitor.ZeusMonitor`` that measures this rank's GPUs.
        server_url: the service, ``http://host:port``.
        job: the job's ``JobSpec``.
        rank: this process's rank; only rank 0 asks for batch sizes.

    Raises:
        ZeusBSOConfigError: a bad URL or job, a monitor without GPUs, GPUs of different models, or a job id that
            the service has with another spec.
        ZeusBSORuntimError: the service cannot be reached (the message names the URL) or failed.
    """

    def __init__(self, monitor: Any, server_url: str, job: JobSpec, rank: int = 0) -> None:
        if not isinstance(job, JobSpec):
            raise ZeusBSOConfigError(f"job must be a zeus.optimizer.batch_size.JobSpec (got {type(job).__name__})")
        native_monitor = getattr(monitor, "_native", None)
        if native_monitor is None:
            raise ZeusBSOConfigError(
                f"monitor must be a zeus.monitor.ZeusMonitor (got {type(monitor).__name__})"
            )
        if not isinstance(rank, int) or isinstance(rank, bool) or rank < 0:
            raise ZeusBSOConfigError(f"rank must be a non-negative integer (got {rank!r})")
        self.monitor = monitor
        self.server_url = server_url
        self.rank = rank
        self._job_spec = job
        self._native = _native.batch_size.BatchSizeOptimizer(native_monitor, server_url, job, rank)
        if rank == 0:
            # As Zeus does: the id the service gave (or kept) is what the next runs of this job must use.
            job_id = self._native.job.get("job_id")
            logger.info(
                "Registered job %s with the batch-size optimizer service at %s; to run this job again, use "
                "JobSpec(job_id=%r, ...)",
                job_id, server_url, job_id,
            )
        # Ranks other than 0: rank 0's trial as copied by the user (or broadcast), adopted by the native
        # optimizer before the next hook.
        self._copied_batch_size: Optional[int] = None
        self._copied_trial_number: Optional[int] = None
        self._copied_job_id: Optional[str] = None
        self._adopted: Optional[tuple[str, int, int]] = None

    # Zeus's attributes.

    @property
    def job(self) -> CreatedJob:
        """The job as registered: the ``JobSpec`` with its ``job_id`` and the GPU configuration."""
        return CreatedJob(**self._native.job)

    @property
    def current_batch_size(self) -> int:
        """This run's batch size; 0 before ``get_batch_size()`` (or before rank 0's is copied here)."""
        if self.rank == 0:
            return self._native.batch_size or 0
        return self._copied_batch_size or 0

    @current_batch_size.setter
    def current_batch_size(self, batch_size: int) -> None:
        if self.rank == 0:
            self._check_rank0_copy("current_batch_size", batch_size, self._native.batch_size or 0)
            return
        self._copied_batch_size = int(batch_size)

    @property
    def trial_number(self) -> int:
        """This run's trial number on the service (1, 2, ...); 0 before it has one."""
        if self.rank == 0:
            return self._native.trial_number
        return self._copied_trial_number or 0

    @trial_number.setter
    def trial_number(self, trial_number: int) -> None:
        if self.rank == 0:
            self._check_rank0_copy("trial_number", trial_number, self._native.trial_number)
            return
        self._copied_trial_number = int(trial_number)

    @property
    def cur_epoch(self) -> int:
        """Epochs reported so far in this run."""
        return self._native.current_epoch

    @property
    def training_finished(self) -> bool:
        """True once the service has said to stop (converged, failed, or early-stopped)."""
        return self._native.training_finished

    @property
    def running_time(self) -> float:
        """Seconds measured in this run so far (what the reports carry)."""
        return self._native.time_s

    @property
    def consumed_energy(self) -> float:
        """Joules measured in this run so far, over the monitor's GPUs."""
        return self._native.energy_j

    # The hooks.

    def get_batch_size(self, broadcast: bool = False) -> int:
        """Returns this run's batch size: asked from the service once, then cached.

        Args:
            broadcast: under ``torch.distributed``, a collective call: every rank must call it; rank 0 asks the
                service and every rank returns its batch size (and takes its trial number and job id). Without an
                initialised process group it is the plain call.

        Raises:
            ZeusBSOBadOperationError: a rank other than 0, without ``broadcast``.
            ZeusBSORuntimError: the service cannot be reached, failed, or answered a batch size the job does not
                have.
        """
        if broadcast and framework.is_distributed():
            return self._get_batch_size_broadcast()
        if self.rank != 0:
            raise ZeusBSOBadOperationError(
                f"Only rank 0 asks the batch-size service for a batch size (this is rank {self.rank}). Copy rank "
                "0's current_batch_size and trial_number to this rank, or call get_batch_size(broadcast=True) on "
                "every rank under torch.distributed."
            )
        return self._native.get_batch_size()

    def on_train_begin(self) -> None:
        """Starts measuring this run. Call it after ``get_batch_size()``.

        Raises:
            ZeusBSOOperationOrderError: no batch size yet.
        """
        self._require_trial("on_train_begin()")
        self._sync()
        self._native.on_train_begin()

    def on_epoch_end(self) -> None:
        """Optional: pauses the measurement until ``on_evaluate()``, so that evaluation is not charged."""
        self._sync()
        self._native.on_epoch_end()

    def on_evaluate(self, metric: float) -> None:
        """Reports the validation metric after an epoch; the service decides whether to go on.

        Does nothing once training has finished. Sets ``training_finished`` when the service says to stop.

        Raises:
            ZeusBSOOperationOrderError: called before ``get_batch_size()``.
            ZeusBSOTrainFailError: the run ended without converging (target not reached within
                ``max_epochs``, or early-stopped because its cost passed ``beta_knob`` x the best converged
                run's); the message is the service's.
        """
        if self.training_finished:
            return
        self._require_trial("on_evaluate()")
        self._sync()
        stop_train, converged, message = self._native.on_evaluate(float(metric))
        if stop_train and not converged:
            raise ZeusBSOTrainFailError(message)

    def finish(self, metric: float) -> bool:
        """Ends this run now (training stopped for a reason of your own) and reports it as final.

        Returns whether the service counts the run as converged. Not in Zeus.
        """
        self._require_trial("finish()")
        self._sync()
        _, converged, _ = self._native.finish(float(metric))
        return converged

    # Python's part.

    def _sync(self) -> None:
        """Waits for the framework's queued GPU work, as ZeusMonitor's windows do, before a window opens or closes."""
        gpu_indices = getattr(self.monitor, "gpu_indices", None)
        if gpu_indices:
            framework.sync_execution(gpu_indices, sync_with=getattr(self.monitor, "sync_with", "torch"))

    def _check_rank0_copy(self, name: str, value: int, actual: int) -> None:
        """Zeus code may copy rank 0's own values back onto rank 0; anything else would disagree with the service."""
        if value != actual:
            raise ZeusBSOBadOperationError(
                f"rank 0's {name} comes from the batch-size service ({actual}); it cannot be set to {value}"
            )

    def _require_trial(self, hook: str) -> None:
        if self.rank == 0:
            if self._native.batch_size is None:
                raise ZeusBSOOperationOrderError(f"Call get_batch_size() before {hook}.")
            return
        if self._copied_batch_size is None or self._copied_trial_number is None:
            raise ZeusBSOOperationOrderError(
                f"Rank {self.rank} has no batch size before {hook}: copy rank 0's current_batch_size and "
                "trial_number to this rank's optimizer, or call get_batch_size(broadcast=True) on every rank."
            )
        job_id = self._copied_job_id or self._job_spec.job_id
        if job_id is None:
            raise ZeusBSOConfigError(
                f"Rank {self.rank} cannot report: its JobSpec has no job_id, so it does not know the job rank 0 "
                "registered. Give the JobSpec a job_id, or call get_batch_size(broadcast=True) on every rank."
            )
        trial = (job_id, self._copied_batch_size, self._copied_trial_number)
        if trial != self._adopted:
            self._native.adopt_trial(*trial)
            self._adopted = trial

    def _get_batch_size_broadcast(self) -> int:
        import torch.distributed as dist

        payload: list[Any] = [None]
        failure: Optional[BaseException] = None
        if dist.get_rank() == 0:
            try:
                batch_size = self.get_batch_size()
                payload[0] = ("ok", batch_size, self.trial_number, self.job.job_id)
            except ZeusBaseError as e:
                failure = e
                payload[0] = ("error", type(e).__name__, e.message)
            except Exception as e:  # noqa: BLE001 (told to the other ranks, then raised here)
                failure = e
                payload[0] = ("error", ZeusBSORuntimError.__name__, f"{type(e).__name__}: {e}")
        dist.broadcast_object_list(payload, src=0)
        if failure is not None:
            raise failure
        if payload[0][0] == "error":
            _, class_name, message = payload[0]
            cls = getattr(_exceptions, class_name, ZeusBSORuntimError)
            raise cls(f"rank 0 could not get a batch size: {message}")
        _, batch_size, trial_number, job_id = payload[0]
        if dist.get_rank() != 0:
            if self.rank == 0:
                raise ZeusBSOConfigError(
                    f"this optimizer was built with rank=0 but torch.distributed says rank {dist.get_rank()}; pass "
                    "rank=torch.distributed.get_rank()"
                )
            self._copied_batch_size = batch_size
            self._copied_trial_number = trial_number
            self._copied_job_id = job_id
            self._require_trial("get_batch_size(broadcast=True) returns")
        return batch_size
