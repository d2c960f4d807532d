"""zeus.optimizer.batch_size.JobSpec: Zeus's fields and defaults, and the service's rules, checked when it is built."""

from __future__ import annotations

import dataclasses

import pytest

from zeus import _native
from zeus.exception import ZeusBSOConfigError, ZeusInvalidArgumentError
from zeus.optimizer.batch_size import CreatedJob, JobSpec
from zeus.optimizer.batch_size.common import JobSpec as CommonJobSpec


def test_job_spec_defaults_and_validation() -> None:
    job = JobSpec(job_id_prefix="mnist", batch_sizes=[1024, 32, 256], default_batch_size=256)
    # Zeus's defaults (zeus-reference 3.1).
    assert (job.job_id, job.eta_knob, job.beta_knob, job.target_metric, job.higher_is_better_metric) == \
        (None, 0.5, 2.0, 0.5, True)
    assert (job.max_epochs, job.num_pruning_rounds, job.window_size, job.mab_prior_mean, job.mab_prior_precision,
            job.mab_num_explorations, job.mab_seed) == (100, 2, 0, 0.0, 0.0, 2, None)
    assert job.policy == "zeus"  # the extension's default: Zeus's own exploration
    assert job.batch_sizes == [32, 256, 1024]  # sorted, as Zeus's validator does
    assert CommonJobSpec is JobSpec  # Zeus's import path


def test_job_spec_problems_are_config_errors_naming_the_field() -> None:
    with pytest.raises(ZeusBSOConfigError, match="default_batch_size 48 is not in batch_sizes") as info:
        JobSpec(job_id_prefix="mnist", batch_sizes=[32, 64], default_batch_size=48)
    assert isinstance(info.value, ValueError) and isinstance(info.value, ZeusInvalidArgumentError)
    with pytest.raises(ValueError, match=r"eta_knob: eta_knob must be in \[0, 1\].*max_epochs: max_epochs must be "
                                         r"positive"):
        JobSpec(job_id_prefix="mnist", batch_sizes=[32], default_batch_size=32, eta_knob=1.5, max_epochs=0)
    with pytest.raises(ValueError, match="job_id 'cifar-1' must start with job_id_prefix 'mnist'"):
        JobSpec(job_id="cifar-1", job_id_prefix="mnist", batch_sizes=[32], default_batch_size=32)
    with pytest.raises(ValueError, match=r"max_epochs: must be an integer \(got '10'\)"):
        JobSpec(job_id_prefix="mnist", batch_sizes=[32], default_batch_size=32, max_epochs="10")  # type: ignore
    with pytest.raises(ValueError, match="batch_sizes: must be a list of integers"):
        JobSpec(job_id_prefix="mnist", batch_sizes=[32, 6.5], default_batch_size=32)  # type: ignore
    with pytest.raises(ValueError, match="num_pruning_rounds must be at least 1"):
        JobSpec(job_id_prefix="mnist", batch_sizes=[32], default_batch_size=32, num_pruning_rounds=0)
    with pytest.raises(TypeError):
        JobSpec("mnist", [32], 32)  # type: ignore[misc]  # keyword-only, as pydantic


def test_job_spec_policy_is_an_extension_checked_by_name() -> None:
    job = JobSpec(job_id_prefix="mnist", batch_sizes=[32, 64], default_batch_size=32, policy="zeus-robust")
    assert job.policy == "zeus-robust"
    assert job.dict()["policy"] == "zeus-robust"
    # It follows Zeus's fields, so Zeus's fields keep their order.
    assert [f.name for f in dataclasses.fields(JobSpec)][-2:] == ["mab_seed", "policy"]
    with pytest.raises(ZeusBSOConfigError,
                       match="policy: unknown batch-size policy 'greedy'; use one of zeus, zeus-robust") as info:
        JobSpec(job_id_prefix="mnist", batch_sizes=[32], default_batch_size=32, policy="greedy")
    assert isinstance(info.value, ValueError)
    with pytest.raises(ValueError, match=r"policy: must be a string \(got 2\)"):
        JobSpec(job_id_prefix="mnist", batch_sizes=[32], default_batch_size=32, policy=2)  # type: ignore[arg-type]


def test_fields_types_defaults_and_docs_come_from_the_native_list() -> None:
    native = _native.batch_size.job_spec_fields()
    user = [f for f in native if f["part"] == "job"]
    gpu = [f for f in native if f["part"] == "gpu"]
    assert [f.name for f in dataclasses.fields(JobSpec)] == [f["name"] for f in user]
    assert [f.name for f in dataclasses.fields(CreatedJob)] == [f["name"] for f in user + gpu]
    declared = {f.name: f for f in dataclasses.fields(CreatedJob)}
    for f in native:
        if f["required"] and f["part"] == "job":
            assert declared[f["name"]].default is dataclasses.MISSING, f["name"]
        else:
            assert declared[f["name"]].default == f["default"], f["name"]
        assert f"{f['name']}: {f['doc']}" in (JobSpec if f["part"] == "job" else CreatedJob).__doc__
    assert JobSpec.__module__ == "zeus.optimizer.batch_size.common"
    # Every type problem, named in the list's order.
    with pytest.raises(ZeusBSOConfigError) as info:
        JobSpec(job_id=3, job_id_prefix="mnist", batch_sizes=(32,), default_batch_size=32,  # type: ignore[arg-type]
                beta_knob="x", higher_is_better_metric=1, mab_seed=1.5)  # type: ignore[arg-type]
    assert str(info.value) == (
        "Invalid JobSpec: job_id: must be a string or None (got 3); beta_knob: must be a number or None (got 'x'); "
        "higher_is_better_metric: must be True or False (got 1); mab_seed: must be an integer or None (got 1.5)")
    job = JobSpec(job_id_prefix="mnist", batch_sizes=(64, 32), default_batch_size=32, eta_knob=1)  # type: ignore
    assert job.batch_sizes == [32, 64] and isinstance(job.eta_knob, float)
    created = CreatedJob(**{**job.dict(), "job_id": "mnist-1", "max_power": 600.0, "number_of_gpus": 2,
                            "gpu_model": "NVIDIA A40"})
    assert isinstance(created, JobSpec) and created.gpu_model == "NVIDIA A40"
