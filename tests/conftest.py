"""Shared fixtures: the real data sets in ../shared/data (never copied into the repo)."""

import os

# scikit-learn's array-API estimator checks run only when SciPy is imported with
# array-API support; set it before anything imports SciPy so they run, not skip.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
# The suite runs in pytest-xdist workers, one per core (``-n auto`` in pyproject.toml):
# each worker keeps to one core, so an audit runs its fits in the worker itself
# (read by ``skdp.testing`` at import), and the BLAS gets one thread here
# (pytest_configure) and in the processes a test starts (Dask workers, the CLI).
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if XDIST_WORKER:
    os.environ.setdefault("SKDP_AUDIT_JOBS", "1")
    for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")

import functools  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402
from sklearn.preprocessing import Normalizer  # noqa: E402

SHARED_DATA = Path(
    os.environ.get("SKDP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def _require(name):
    path = SHARED_DATA / name
    if not path.exists():
        pytest.fail(f"{path} is missing: the tests need ../shared/data beside the repository "
                    "(or SKDP_SHARED_DATA pointing at it).")
    return path


@functools.lru_cache(maxsize=None)
def _load_pair(stem, n_features):
    X_tr, y_tr = load_svmlight_file(str(_require(f"{stem}.trn.bz2")), n_features=n_features)
    X_te, y_te = load_svmlight_file(str(_require(f"{stem}.tst.bz2")), n_features=n_features)
    norm = Normalizer()
    return norm.transform(X_tr), y_tr, norm.transform(X_te), y_te


def load_adult():
    """Adult (a9a): CSR rows scaled to unit L2 norm, labels +/-1."""
    return _load_pair("adult", 123)


def load_reuters():
    """Reuters: CSR rows scaled to unit L2 norm."""
    return _load_pair("reuters", 8315)


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark_script(name):
    """``benchmarks/<name>.py`` as a module, importing its siblings as it does when run."""
    import importlib.util
    import sys

    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))  # what ``python benchmarks/<name>.py`` puts first
    spec = importlib.util.spec_from_file_location(f"skdp_benchmarks_{name}",
                                                  BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytest_configure(config):
    if XDIST_WORKER:
        # two workers with two BLAS threads each would oversubscribe the two cores: a
        # call's second thread waits for a core (tests that need threads raise the
        # limit); the limit stays for the worker's life
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)


@pytest.fixture(scope="session")
def adult():
    return load_adult()


@pytest.fixture(scope="session")
def reuters():
    return load_reuters()


@pytest.fixture
def rng():
    return np.random.default_rng(0)


#: markers of the tiers that run only when selected by name with ``-m``
_ON_REQUEST = {
    "audit_long": "long audit: run with -m audit_long",
    "slow": "slow tier: run with -m slow",
}


@pytest.fixture(autouse=True)
def _tiers_on_request(request):
    """Tests marked ``audit_long`` or ``slow`` run only when ``-m`` names the marker."""
    selected = request.config.getoption("-m") or ""
    for marker, reason in _ON_REQUEST.items():
        if request.node.get_closest_marker(marker) is not None and marker not in selected:
            pytest.skip(reason)


# The fast tier: ``pytest -m "not heavy"`` (README, "Tests"). A test is heavy when it
# runs scikit-learn's estimator checks, a privacy audit, a Dask cluster or the
# benchmarks, reads a real data set, or took more than about a second and a half in
# ``pytest -m "not heavy" --durations=80`` on 2 shared cores; the full run (plain
# ``pytest``) runs every one of them.
HEAVY_MODULES = {"test_estimator_checks.py", "test_estimator_checks_secure.py", "test_audit.py",
                 "test_audit_secure.py", "test_dask_backend.py", "test_benchmarks.py"}
REAL_DATA_FIXTURES = {"adult", "reuters"}
HEAVY_TESTS = {  # measured over about a second (--durations), or reading a real data set
    "test_accelerated.py": {
        "test_gaussian_poisson_is_calibrated_by_rdp",
        "test_poisson_batches_through_the_estimator_use_the_planned_split",
        "test_the_default_t_follows_the_budget_on_full_batches_with_delta",
    },
    "test_accounting.py": {
        "test_calibrate_reproduces_reference_noise",
        "test_epsilon_never_negative_and_monotone",
    },
    "test_accounting_accountant.py": {
        "test_workers_see_earlier_spends_and_reach_the_default_accountant",
        "test_default_accountant_replay_mode_and_ended_origin",
        "test_in_memory_accountant_budget_holds_in_worker_processes",
        "test_threads_never_exceed_budget",
    },
    "test_accounting_pld.py": {
        "test_extreme_parameters_never_give_a_small_epsilon",
        "test_get_delta_uses_pld",
        "test_k_compositions_equal_the_k_fold",
        "test_pld_never_above_rdp",
    },
    "test_dual_averaging.py": {
        "test_accuracy_grows_with_epsilon",
        "test_activation_frequencies_match_the_stated_probabilities",
        "test_each_record_is_poisson_sampled_at_the_charged_rate",
        "test_nearly_noise_free_run_matches_the_non_private_model",
        "test_paper_calibration_warns_where_valid_and_refuses_elsewhere",
        "test_user_graph_and_mixing_matrix",
    },
    "test_float64_sums.py": {
        "test_one_record_moves_a_long_float32_sum_by_its_clipped_term",
    },
    "test_ledger_durability.py": {
        "test_eight_threads_of_a_hundred_fits_record_exactly_800_spends",
        "test_gridsearch_on_dask_records_every_fit_in_the_parents_ledger",
        "test_sigkill_at_random_points_never_loses_or_doubles_a_spend",
    },
    "test_line_search.py": {
        "test_above_threshold_audit_stays_below_its_epsilon_and_catches_no_threshold_noise",
        "test_above_threshold_with_a_candidates_own_clip_keeps_the_sensitivity",
        "test_high_dimensional_defaults_beat_the_majority_class",
        "test_line_search_fits_classifiers",
        "test_line_search_is_reproducible_and_fresh_per_charge",
        "test_the_filter_never_admits_more_than_its_budget",
    },
    "test_logistic.py": {
        "test_multinomial_on_digits",
    },
    "test_matrix_sensing.py": {
        "test_every_listed_solver_recovers_the_matrix_at_its_defaults",
        "test_one_example_never_contributes_more_than_the_clip",
        "test_recovery_error_at_epsilon_1_and_8",
    },
    "test_minimax.py": {
        "test_a_fit_never_runs_more_than_it_charged",
        "test_escapes_the_exact_saddle_and_the_objective_falls",
        "test_gradient_norm_of_phi_falls_as_epsilon_grows",
        "test_matrix_sensing_recovery",
        "test_minimax_form_recovers_and_keeps_its_duals",
        "test_with_increments_a_noise_only_estimate_still_ends_the_descent",
    },
    "test_model_selection.py": {
        "test_audit_of_the_selection_stays_below_its_claim_and_catches_exact_scores",
        "test_same_seed_never_shares_noise_between_charged_searches",
    },
    "test_overflow.py": {
        "test_one_huge_record_gives_a_finite_model",
    },
    "test_preconditioned.py": {
        "test_ill_conditioned_imbalanced_set_needs_no_extra_steps",
    },
    "test_preprocessing.py": {
        "test_dp_standard_scaler_audit_passes_and_catches_a_noiseless_fit",
    },
    "test_private_fits.py": {
        "test_default_accountant_replays_a_seed_and_reports_infinite_epsilon",
        "test_gridsearch_in_workers_charges_the_accountant_in_force",
    },
    "test_private_pipelines.py": {
        "test_bounded_pipeline_at_eps_1_is_within_3_points_of_the_leaking_scaler",
        "test_accuracy_does_not_fall_as_epsilon_grows",
        "test_demo_runs_end_to_end_and_says_what_its_privacy_covers",
    },
    "test_release_door.py": {
        "test_every_allowed_function_still_exists_and_samples",
        "test_the_gram_noise_has_variance_sigma2_on_the_diagonal_and_half_off_it",
    },
    "test_seam.py": {
        "test_no_private_name_crosses_a_room_boundary",
    },
    "test_second_order.py": {
        "test_a_curvature_step_escapes_the_saddle_where_gd_cannot_move",
        "test_certification_rate_goes_to_one_as_n_grows",
        "test_matrix_sensing_recovery_at_epsilon_8",
    },
    "test_paper_benchmarks.py": {
        "test_paper001_adult_reports_the_optimum_accuracy_of_the_optimum",
        "test_paper002_batch_rate_table",
        "test_paper002_every_method_fits_with_the_estimators_default_alpha",
    },
    "test_sensitivity_properties.py": {
        "test_accumulation_slow",
        "test_sensitivity",
    },
    "test_svm.py": {
        "test_adult_default_accuracy",
        "test_default_loss_is_within_noise_of_the_best_on_adult_validation",
        "test_reuters_accuracy_without_densifying",
    },
}


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.path.name
        name = getattr(item, "originalname", None)  # the test function, all its parameters
        if (module in HEAVY_MODULES or name in HEAVY_TESTS.get(module, ())
                or REAL_DATA_FIXTURES.intersection(getattr(item, "fixturenames", ()))):
            item.add_marker(pytest.mark.heavy)
