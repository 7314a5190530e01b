"""Mistake sensitivity: how a mutant's answer is scored, and that no task's sensitivity regresses.

The regression test reads the committed records (instances/sensitivity/) and rescores their
answers against the current instance files, so a widened tolerance, a reweighted metric or a
changed binding that lets a recorded mistake through fails here; a changed script or mutant
file makes the record stale (rerun `eegbench instances --sensitivity --task T`).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.benchmark import catalog, mutants, sensitivity, truth
from runner.benchmark.sensitivity import answer_of, answer_score, score_record
from validation.instance import Instance

PROJECT_ROOT = Path(__file__).resolve().parents[3]

# Mutants that the scorer does not catch today (task -> mutant names), each a finding of the
# sensitivity run: this list may only shrink. Fixing a task (tolerance, weights, bindings,
# instruction) and rerunning its sensitivity removes its entry.
KNOWN_GAPS: dict[str, set[str]] = {
    "eab_t2_artifact": {"artifact_vs_clean_only", "eog_emg_names", "ocular_muscle_swapped"},
    "fa_alpha_asymmetry": {"alpha_8_to_12", "average_reference", "whole_recording"},
    "fa_alpha_coherence": {"alpha_8_to_12", "phase_locking_value"},
    "fa_alpha_peak_frequency": {"centre_of_gravity", "first_channel_only", "search_8_to_12",
        "welch_default_segment_length", "whole_recording"},
    "fa_alpha_power_change": {"alpha_8_to_12", "relative_alpha_power", "window_end_as_length"},
    "fa_alpha_relpower": {"pooled_ratio", "welch_default_segments"},
    "fa_aperiodic_exponent": {"average_reference", "fit_through_peaks"},
    "fa_bad_channel_set": {"highpass_first", "two_sided_z"},
    "fa_band_dominance": {"average_reference", "delta_from_0p5_hz", "edges_inclusive", "welch_4s_segments"},
    "fa_band_power_db": {"volts_not_microvolts"},
    "fa_hjorth": {"filter_after_cutting"},
    "fa_max_kurtosis_channel": {"all_eeg_channels", "average_reference", "filter_after_cutting", "unfiltered",
        "whole_recording"},
    "fa_pipeline_epoch_region_test": {"annotations_in_cropped_time", "bad_match_case_sensitive_lower",
        "bad_match_mne_upper_only", "bad_onsets_as_points", "mean_density_not_area", "power_averaged_before_db",
        "regions_swapped", "volts_not_microvolts"},
    "fa_pipeline_hd_interpolate": {"band_power_in_volts", "classic_zscore", "interpolate_about_head_origin",
        "mad_without_consistency_constant"},
    "fa_pipeline_line_noise_edf": {"average_reference_first", "crop_before_filtering", "line_band_50hz",
        "notch_skipped", "relative_over_passband"},
    "fa_pipeline_plux_qc": {"clipping_rule_ignored", "flat_rule_skipped", "last_channel_dataset", "line_band_60hz"},
    "fa_refusal_alpha_compare": {"channels_in_file_order", "nearest_channel_substituted", "no_request_validation",
        "window_clipped_to_recording"},
    "fa_reref_filter_fif": {"average_reference_as_projector", "crop_before_filter"},
    "fa_rms_ranking": {"average_reference_first", "highpass_only", "unfiltered_rms"},
    "fa_spectral_edge": {"range_to_nyquist", "window_ignored"},
    "fa_theta_beta_max_channel": {"average_reference_first", "band_means_of_log_psd", "channels_in_file_order"},
    "nc_auditory_n100_channels": {"bad_channel_kept", "both_sides_pooled", "no_average_reference",
        "window_minimum_not_mean"},
    "nc_checker_rt": {"deadline_ignored", "first_press_on_stimulus_side"},
    "nc_component_peak": {"largest_absolute_deflection", "no_baseline", "peak_per_channel_then_mean",
        "sample_column_one_based"},
    "nc_erp_image": {"reject_by_annotation_default"},
    "nc_erp_request_check": {"closest_channel_substituted", "window_checked_in_seconds", "window_clipped_to_epoch",
        "window_end_only_checked"},
    "nc_face_house_diff": {"reject_by_annotation_default", "sample_column_one_based"},
    "nc_face_selective_channels": {"no_baseline", "reject_by_annotation_default", "stronger_as_larger_mean"},
    "nc_gfp_peak": {"peak_over_whole_epoch", "reject_by_annotation_default"},
    "nc_inversion_effect": {"global_post_stimulus_minimum", "no_baseline", "peak_per_channel_then_mean"},
    "nc_p1_channel_ranking": {"no_average_reference", "no_baseline", "reject_by_annotation_default",
        "window_mean_not_peak"},
    "nc_p1_hemisphere": {"no_baseline", "reject_by_annotation_default", "sample_column_one_based",
        "window_peak_not_mean"},
    "nc_p1_lateralisation": {"mean_of_channel_peaks", "no_average_reference", "no_baseline"},
    "nc_p1_peak": {"reject_by_annotation_default", "sample_column_one_based"},
    "nc_pipeline_inversion_2x2": {"latency_from_epoch_start", "no_baseline", "one_way_anova_for_interaction",
        "reject_before_rereference", "reject_on_cluster_only"},
    "nc_pipeline_rt_split": {"first_press_on_same_side", "latency_from_epoch_start", "median_split",
        "reject_on_cluster_only"},
    "nc_pipeline_sample_contrast": {"filter_eog_too", "keep_eeg053"},
    "nc_pipeline_two_subjects": {"bad_channels_from_first_subject", "correlation_over_whole_epoch",
        "grand_average_pooled_trials", "latency_from_epoch_start", "reject_on_cluster_only"},
    "nc_rt_sequence_effect": {"first_press_on_same_side", "incorrect_responses_included"},
    "nc_trial_contrast": {"latency_from_epoch_start", "no_average_reference", "no_baseline", "paired_t_test",
        "sample_column_one_based"},
    "pi_alpha_reactivity": {"marker_high_level_read_as_closed"},
    "pi_emg_eeg_hf_ratio": {"four_second_segments"},
    "pi_eog_blink_count": {"absolute_value_peaks", "causal_single_pass_filter", "filter_after_cutting",
        "no_minimum_distance", "polarity_ignored", "volts_not_microvolts"},
    "pi_eog_regression": {"filter_after_cutting", "no_highpass", "no_intercept"},
    "pi_eog_segment_ranking": {"bipolar_derivation_first_channel_only", "filter_after_cutting", "no_bandpass",
        "std_instead_of_ptp_or_rms"},
    "pi_eye_state_alpha": {"marker_high_level_read_as_closed"},
    "pi_open_alpha_reactivity": {"alpha_band_8_12", "marker_high_level_read_as_closed", "ratio_closed_over_open",
        "whole_marker_block_not_window"},
    "pi_open_eog_propagation": {"whole_recording_not_window", "zero_based_channel_index"},
    "pi_open_eye_state_change": {"alpha_direction_reversed", "cue_time_from_marker", "trailing_window_labels"},
    "pi_open_eyes_closed_windows": {"broadband_power_no_bandpass", "largest_gap_on_linear_power", "median_split"},
    "pi_open_muscle_channel": {"beta_band_as_emg", "line_noise_in_band", "whole_recording_not_window"},
    "pi_pipeline_cleaning_choice": {"distortion_over_whole_window", "flag_on_first_monitor_only", "mean_of_channel_db"},
    "pi_pipeline_eye_state_stats": {"adc_units_not_converted", "averaged_in_db", "closed_upper_band_edge",
        "student_t_test", "test_on_linear_power"},
    "pi_pipeline_psg_cleaning": {"referential_emg", "regression_fit_on_clean_windows"},
    "pi_pipeline_session_qc": {"flat_rule_on_filtered_signal", "ptp_on_unfiltered_signal"},
    "pi_refusal_channel_window": {"end_of_window_not_checked", "nearest_channel_substituted",
        "one_reason_for_every_refusal"},
    "sa_awakenings": {"min_run_strictly_longer", "sleep_onset_to_lights_on", "waso_from_counted_awakenings_only"},
    "sa_consolidation": {"waso_all_wake_epochs", "waso_until_lights_on"},
    "sa_delta_peak_epoch": {"drop_channel_in_all_epochs", "no_artefact_rejection"},
    "sa_efficiency_set": {"efficiency_rounded_before_comparison"},
    "sa_fragmentation": {"sleep_period_only", "yasa_rem_code_4"},
    "sa_n2n3_fraction": {"bandpass_before_staging", "fraction_of_sleep_epochs"},
    "sa_pipeline_device_validation": {"agreement_averaged_over_nights", "measure_in_epochs",
        "ppv_instead_of_sensitivity", "ranking_by_signed_difference"},
    "sa_pipeline_night_report": {"architecture_of_time_in_bed", "first_half_of_recording",
        "rem_latency_from_epoch_after_onset", "sleep_period_from_lights_off"},
    "sa_pipeline_psg_staging": {"no_artefact_exclusion", "simpson_closed_band", "slow_wave_assigned_by_start"},
    "sa_pipeline_sleep_cycles": {"gap_of_15_min_still_merges", "rem_episodes_not_merged",
        "rem_period_counts_only_rem_epochs", "sleep_period_end_exclusive", "tail_counted_as_cycle"},
    "sa_psg_stage_window_open": {"eeg_only_staging", "event_epoch_rounded", "frontal_eeg", "occipital_eeg",
        "stretch_end_inclusive"},
    "sa_rem_latency_open": {"other_column", "to_end_of_first_rem_epoch", "wake_kept_in_sleep_latency"},
    "sa_sleep_architecture_open": {"efficiency_over_sleep_period", "waso_includes_sleep_latency",
        "whole_recording_as_time_in_bed"},
    "sa_sleep_cycles_open": {"cycle1_from_lights_off", "other_column", "rem_episodes_not_merged",
        "whole_night_not_window"},
    "sa_sleep_onset_open": {"from_first_row_not_lights_off"},
    "sa_slow_wave_count": {"resampled_to_100hz", "tmax_read_as_duration"},
    "sa_stage_percent": {"always_reference_column"},
    "sa_stage_ranking": {"always_reference_column", "wake_only_after_sleep_onset"},
    "sa_window_refusal": {"last_epoch_exclusive", "never_refuses", "no_range_check",
        "range_checked_against_whole_file"},
}

# Tasks whose method ensembles hold a pipeline value their own ground truth rejects.
KNOWN_REJECTED_ALTERNATIVES: set[str] = set()

# Mutants that raise on some instances (task -> mutant -> instances): a pipeline that crashes
# there gives no answer (e.g. a zero-based index past the last channel); counted as not caught.
KNOWN_FAILURES = {
    "pi_open_eog_propagation": {"zero_based_channel_index": 1},
    "pi_pipeline_cleaning_choice": {"x_raw_as_reference": 2, "flag_on_first_monitor_only": 2},
    "sa_sleep_cycles_open": {"other_column": 1},
}


@pytest.fixture(scope="module")
def every() -> list[Instance]:
    return catalog.load_all(PROJECT_ROOT / "instances")


def _instance(every: list[Instance], case_id: str) -> Instance:
    return next(i for i in every if i.case_id == case_id)


def test_the_true_answer_scores_100_and_a_wrong_field_loses_its_weight(every):
    hjorth = _instance(every, "fa_hjorth-01")
    truth = {m.target_key: m.params["gt_value"] for m in hjorth.eval_config.metrics}
    assert answer_score(hjorth, truth) == 100.0
    assert answer_score(hjorth, {**truth, "mobility": truth["mobility"] / 160}) == 50.0
    assert answer_score(hjorth, {}) == 0.0


def test_an_ensemble_answers_with_its_consensus(every):
    asymmetry = _instance(every, "fa_alpha_asymmetry-01")
    assert asymmetry.reference is not None and asymmetry.reference.ensembles
    answer = answer_of(asymmetry, dict(asymmetry.reference.ensembles))
    assert answer == {"alpha_asymmetry": 0.285, "stronger_side": "right"}
    assert answer_score(asymmetry, answer) == 100.0


def test_a_pipeline_value_outside_the_tolerance_is_a_rejected_alternative(every):
    asymmetry = _instance(every, "fa_alpha_asymmetry-01")
    assert sensitivity.alternatives(asymmetry) == (10, 10)
    assert asymmetry.reference is not None and asymmetry.reference.ensembles
    shifted = asymmetry.model_copy(deep=True)
    assert shifted.reference is not None and shifted.reference.ensembles
    shifted.reference.ensembles["alpha_asymmetry"]["multitaper"] = 0.5
    assert sensitivity.alternatives(shifted) == (9, 10)


def test_a_mutant_is_caught_on_the_instances_where_it_scores_at_most_50(every):
    hjorth = [i for i in every if i.task_id == "fa_hjorth"]
    truths = {i.case_id: {m.target_key: m.params["gt_value"] for m in i.eval_config.metrics} for i in hjorth}
    wrong = {case: {**answer, "mobility": answer["mobility"] + 5} for case, answer in truths.items()}
    half = dict(list(truths.items())[:5] + list(wrong.items())[5:])
    failed = {**wrong, hjorth[0].case_id: {sensitivity.ERROR_KEY: "ValueError: boom"}}
    record = {"task_id": "fa_hjorth", "mutants": {"right": {"answers": truths}, "wrong": {"answers": wrong},
                                                  "half": {"answers": half}, "failed": {"answers": failed}}}
    verdict = score_record(record, hjorth)
    assert verdict.shares == {"right": 0.0, "wrong": 1.0, "half": 0.5, "failed": 0.9}
    assert verdict.failed == {"failed": 1}
    assert verdict.caught == 2 and verdict.uncaught == ["half", "right"] and not verdict.passes


def test_every_task_has_its_mutants_recorded_and_caught(every):
    tasks = sorted(p.stem for p in (PROJECT_ROOT / truth.TASKS_DIR).glob("*.json"))
    assert len(tasks) >= 80 and set(mutants.tasks_with_mutants(PROJECT_ROOT)) <= set(tasks)
    missing = [t for t in tasks if sensitivity.read_record(PROJECT_ROOT, t) is None]
    assert not missing, f"no sensitivity record: {missing}"
    problems = []
    for task_id in tasks:
        record = sensitivity.read_record(PROJECT_ROOT, task_id)
        assert record is not None
        instances = sorted((i for i in every if i.task_id == task_id), key=lambda i: i.case_id)
        reasons = sensitivity.stale(PROJECT_ROOT, record, instances)
        if reasons:
            problems.append(f"{task_id}: stale record ({'; '.join(reasons)})")
            continue
        verdict = score_record(record, instances)
        summary = record["summary"]
        if (summary["shares"], summary["caught"]) != (verdict.shares, verdict.caught):
            problems.append(f"{task_id}: the record's summary differs from its answers rescored: "
                            f"{summary['shares']} vs {verdict.shares}")
        if verdict.mutants < mutants.MIN_MUTANTS:
            problems.append(f"{task_id}: {verdict.mutants} mutants, fewer than {mutants.MIN_MUTANTS}")
        if verdict.failed != KNOWN_FAILURES.get(task_id, {}):
            problems.append(f"{task_id}: mutants that raise on some instances: {verdict.failed}")
        rejected = verdict.alternatives_accepted < verdict.alternatives
        if rejected != (task_id in KNOWN_REJECTED_ALTERNATIVES):
            problems.append(f"{task_id}: {verdict.alternatives_accepted}/{verdict.alternatives} alternatives accepted")
        if set(verdict.uncaught) != KNOWN_GAPS.get(task_id, set()):
            problems.append(f"{task_id}: uncaught {verdict.uncaught}, known {sorted(KNOWN_GAPS.get(task_id, set()))}")
    assert not problems, "\n".join(problems)
