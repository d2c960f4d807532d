"""The batch-size optimizer's exceptions (Zeus's ``zeus.optimizer.batch_size.exceptions``).

They are defined once, in :mod:`zeus.exception`, with every other class of the
package; this module re-exports them under the import path Zeus users know.
Failures from the native client reach Python through the one error table
(``python/src/errors.cc``):

* ``ZeusBSOConfigError`` (also a ``ValueError``): a bad ``JobSpec`` (raised when it
  is built), a bad server URL, a monitor that measures no GPUs, GPUs of
  different models;
* ``ZeusBSORuntimError`` (Zeus's spelling): the service cannot be reached (the
  message names the URL), or answered with an error, whatever its HTTP status
  (as Zeus; the status is the exception's ``native_code``), e.g. when pruning
  found no batch size that reaches the target;
* ``ZeusBSOBadOperationError``: a call only rank 0 may make;
* ``ZeusBSOOperationOrderError``: a hook called before ``get_batch_size()``;
* ``ZeusBSOTrainFailError``: the run ended without converging (target not
  reached within ``max_epochs``, or its cost passed ``beta_knob`` times the
  cheapest converged run's).
"""

from zeus.exception import (
    ZeusBSOBadOperationError,
    ZeusBSOClientBaseError,
    ZeusBSOConfigError,
    ZeusBSOOperationOrderError,
    ZeusBSORuntimError,
    ZeusBSOTrainFailError,
)

__all__ = [
    "ZeusBSOBadOperationError",
    "ZeusBSOClientBaseError",
    "ZeusBSOConfigError",
    "ZeusBSOOperationOrderError",
    "ZeusBSORuntimError",
    "ZeusBSOTrainFailError",
]
