"""A recurring training job that lets Zeus's batch-size optimizer choose its batch size.

Written as a Zeus user writes it; each run of this script is one recurrence of the job. On the emulator, from the
repository root after `make`:

    build/bin/zeus bso-server --listen 127.0.0.1:8000 --database sqlite:///bso.db &
    export PYTHONPATH=build/python ZEUS_NVML_LIBRARY=$PWD/build/lib/libzeus-nvml-emulator.so
    export ZEUS_EMULATOR_CONFIG=$PWD/examples/emulated-training.json
    for run in 1 2 3 4 5 6; do python3 examples/python/batch_size_optimizer.py; done

The first runs explore batch sizes from the default downwards, then upwards (pruning); later runs sample the
batch sizes that reached the target (Thompson sampling). A run that cannot reach the target accuracy within
max_epochs, or costs more than beta_knob times the best run so far, ends with ZeusBSOTrainFailError.
"""

import argparse

import torch
from torch import nn

from zeus.monitor import ZeusMonitor
from zeus.optimizer.batch_size.client import BatchSizeOptimizer
from zeus.optimizer.batch_size.common import JobSpec
from zeus.optimizer.batch_size.exceptions import ZeusBSOTrainFailError


def synthetic_data(n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Two classes of 1x8x8 images: noise with a bright top half (class 1) or bright bottom half (class 0)."""
    labels = torch.randint(0, 2, (n,), generator=generator)
    images = torch.randn(n, 1, 8, 8, generator=generator)
    images[labels == 1, :, :4, :] += 0.5
    images[labels == 0, :, 4:, :] += 0.5
    return images, labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-url", default="http://127.0.0.1:8000")
    parser.add_argument("--job-id", default="synthetic-cnn-1")
    args = parser.parse_args()

    monitor = ZeusMonitor(gpu_indices=[0])
    job = JobSpec(
        job_id=args.job_id,
        job_id_prefix="synthetic-cnn",
        batch_sizes=[16, 32, 64, 128, 256],
        default_batch_size=64,
        target_metric=0.9,  # validation accuracy
        max_epochs=6,
    )
    bso = BatchSizeOptimizer(monitor=monitor, server_url=args.server_url, job=job)

    batch_size = bso.get_batch_size()
    print(f"Trial {bso.trial_number}: batch size {batch_size}")

    torch.manual_seed(0)  # the same data and initial weights in every run: only the batch size changes
    generator = torch.Generator().manual_seed(0)
    train_x, train_y = synthetic_data(1024, generator)
    val_x, val_y = synthetic_data(256, generator)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 8 * 8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()

    bso.on_train_begin()
    try:
        for epoch in range(job.max_epochs):
            model.train()
            for start in range(0, len(train_x), batch_size):
                optimizer.zero_grad()
                loss_fn(model(train_x[start : start + batch_size]), train_y[start : start + batch_size]).backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                accuracy = (model(val_x).argmax(dim=1) == val_y).float().mean().item()
            print(f"  epoch {epoch + 1}: validation accuracy {accuracy:.3f}")
            bso.on_evaluate(accuracy)
            if bso.training_finished:
                break
    except ZeusBSOTrainFailError as e:
        print(f"  batch size {batch_size} failed: {e}")
        return
    print(f"  batch size {batch_size} reached the target in {bso.cur_epoch} epochs, "
          f"{bso.running_time:.1f} s and {bso.consumed_energy:.1f} J")


if __name__ == "__main__":
    main()
