"""T1 EEG knowledge QA: four-option questions written for this project.

Each question has one correct answer and three distractors that are plainly wrong for the
question as asked (textbook facts: AASM scoring manual, ACNS terminology, standard clinical
EEG texts). Options are placed deterministically without position bias: the questions, ordered
by a hash of their id, take the correct answer at A, B, C, D in turn (32 questions: 8 per
letter, so always answering one letter scores the chance level 0.25), and the distractors fill
the other positions in an order shuffled by a generator seeded with the question id.
"""
from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

LETTERS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class Question:
    """One T1 question: its id, text, the correct option and three distractors."""

    qid: str
    text: str
    correct: str
    distractors: tuple[str, str, str]


QUESTIONS: tuple[Question, ...] = (
    Question("absence_sw", "Typical (childhood) absence seizures show which ictal EEG pattern?",
             "Generalized 3 Hz spike-and-wave discharges",
             ("Hypsarrhythmia", "Focal temporal sharp waves", "Periodic lateralized discharges at 1 Hz")),
    Question("alpha_band", "In healthy adults the posterior dominant (alpha) rhythm lies in which frequency range?",
             "8-13 Hz", ("0.5-4 Hz", "4-7 Hz", "30-45 Hz")),
    Question("alpha_reactivity", "The posterior alpha rhythm of an awake adult is best seen under which condition?",
             "Relaxed wakefulness with eyes closed",
             ("Eyes open while reading", "Stage N3 sleep", "During mental arithmetic with eyes open")),
    Question("spindle_freq", "Sleep spindles, the hallmark of stage N2, have a frequency of about",
             "11-16 Hz", ("0.5-2 Hz", "4-7 Hz", "40-60 Hz")),
    Question("k_complex_stage", "K-complexes are a defining feature of which sleep stage?",
             "N2", ("Wake", "REM", "N1")),
    Question("n3_criterion", "Under AASM rules, an epoch is scored N3 when slow waves occupy at least what share of it?",
             "20% of the epoch", ("5% of the epoch", "50% of the epoch", "100% of the epoch")),
    Question("epoch_length", "What is the standard epoch length for visual sleep staging under AASM rules?",
             "30 seconds", ("2 seconds", "10 seconds", "5 minutes")),
    Question("hypsarrhythmia", "Hypsarrhythmia is the typical interictal EEG pattern of which syndrome?",
             "Infantile spasms (West syndrome)",
             ("Childhood absence epilepsy", "Juvenile myoclonic epilepsy", "Self-limited epilepsy with centrotemporal spikes")),
    Question("odd_numbers", "In the international 10-20 system, electrodes with odd numbers (e.g. C3, O1) lie over",
             "The left hemisphere", ("The right hemisphere", "The midline", "The cerebellum")),
    Question("cz_position", "In the 10-20 system, the electrode Cz is located at",
             "The vertex on the midline", ("The left mastoid", "The inion", "The right temporal region")),
    Question("nyquist", "An EEG is sampled at 256 Hz. Up to which frequency can signal content be represented without aliasing?",
             "128 Hz", ("256 Hz", "512 Hz", "64 Hz")),
    Question("line_noise_eu", "Power-line interference in a recording made in Europe appears at",
             "50 Hz", ("60 Hz", "10 Hz", "100 kHz")),
    Question("blink_location", "Eye-blink artifacts are largest at which electrodes?",
             "Frontopolar electrodes (Fp1, Fp2)", ("Occipital electrodes (O1, O2)",
                                                   "Mastoid reference electrodes only", "Central electrodes (C3, C4)")),
    Question("emg_artifact", "Scalp muscle (EMG) artifact is characterised on EEG by",
             "Very fast, high-frequency activity above about 20 Hz",
             ("Slow waves below 1 Hz", "Regular 3 Hz spike-and-wave", "A flat line")),
    Question("benzodiazepine_beta", "Which EEG change is classically produced by benzodiazepines?",
             "Increased beta activity", ("Hypsarrhythmia", "Loss of all activity above 1 Hz",
                                         "Periodic sharp wave complexes")),
    Question("lambda_waves", "Lambda waves are seen over the occipital region during",
             "Visual scanning (e.g. reading or looking at a picture)",
             ("Deep N3 sleep", "Hyperventilation in the dark", "Passive limb movement")),
    Question("mu_rhythm", "The mu rhythm is recorded over the central region and is attenuated by",
             "Movement (or planned movement) of the contralateral limb",
             ("Eye closure", "Photic stimulation only", "Drowsiness alone")),
    Question("triphasic", "Triphasic waves are classically associated with which condition?",
             "Metabolic encephalopathy, especially hepatic",
             ("Childhood absence epilepsy", "Normal N2 sleep", "Benign variant of drowsiness in adolescents")),
    Question("cjd", "Periodic sharp wave complexes at about 1 per second with rapidly progressive dementia suggest",
             "Creutzfeldt-Jakob disease", ("Alzheimer's disease in its early stage", "Narcolepsy",
                                           "Childhood absence epilepsy")),
    Question("burst_suppression", "Burst-suppression (high-voltage bursts alternating with suppressed background) is typical of",
             "Deep general anaesthesia or severe diffuse cerebral dysfunction",
             ("Normal relaxed wakefulness", "REM sleep", "Mild drowsiness")),
    Question("delta_band", "The delta band conventionally covers frequencies",
             "Below 4 Hz", ("8-13 Hz", "13-30 Hz", "Above 30 Hz")),
    Question("theta_band", "The theta band conventionally covers frequencies",
             "4 to below 8 Hz", ("0.5-2 Hz", "13-30 Hz", "30-80 Hz")),
    Question("rem_emg", "Which finding, together with rapid eye movements and a low-amplitude mixed-frequency EEG, characterises REM sleep?",
             "Low chin (submental) EMG tone", ("High-amplitude slow waves over 50% of the epoch",
                                               "Abundant K-complexes", "Posterior alpha with eyes closed")),
    Question("rolandic", "Self-limited epilepsy with centrotemporal spikes (benign rolandic epilepsy) shows interictal spikes over",
             "The centrotemporal region", ("The occipital pole only", "Frontopolar electrodes only",
                                           "No region: the EEG is always normal")),
    Question("sawtooth", "Sawtooth waves are a feature of which sleep stage?",
             "REM", ("N3", "Wake with eyes open", "N2")),
    Question("vertex_waves", "Vertex sharp waves appear most typically in",
             "Stage N1 sleep", ("Stage N3 sleep", "Alert wakefulness with eyes open", "Status epilepticus only")),
    Question("phase_reversal", "In a bipolar montage, a phase reversal localises the maximum of a focal discharge to",
             "The electrode shared by the two channels that point at each other",
             ("The reference electrode", "The channel with the lowest amplitude", "The ground electrode")),
    Question("jme", "The typical interictal EEG of juvenile myoclonic epilepsy shows",
             "Generalized 4-6 Hz polyspike-and-wave discharges",
             ("Hypsarrhythmia", "Focal temporal slowing only", "Periodic sharp wave complexes")),
    Question("lgs", "Lennox-Gastaut syndrome is associated with which interictal pattern?",
             "Generalized slow spike-and-wave below 2.5 Hz",
             ("Generalized 3 Hz spike-and-wave", "Centrotemporal spikes", "Posterior 10 Hz alpha")),
    Question("car", "A common average reference uses as reference",
             "The mean of all (or all good) scalp electrodes",
             ("One mastoid electrode", "The ground electrode", "The difference of neighbouring electrodes")),
    Question("hyperventilation", "In an untreated child with childhood absence epilepsy, hyperventilation during a routine EEG most often provokes",
             "A typical absence seizure with generalized 3 Hz spike-and-wave",
             ("Hypsarrhythmia", "Sleep spindles", "Burst-suppression")),
    Question("photic_driving", "Posterior activity time-locked to the flash frequency during intermittent photic stimulation is called",
             "Photic driving", ("Mu rhythm", "Burst-suppression", "K-complexes")),
)


def shuffled_options(question: Question,
                     bank: tuple[Question, ...] = QUESTIONS) -> tuple[dict[str, str], str]:
    """(letter -> option text, correct letter) of a question of `bank`."""
    order = sorted(bank, key=lambda q: _digest(q.qid))
    correct = LETTERS[[q.qid for q in order].index(question.qid) % len(LETTERS)]
    distractors = list(question.distractors)
    random.Random(int.from_bytes(_digest(question.qid)[:8], "big")).shuffle(distractors)
    options: dict[str, str] = {}
    for letter in LETTERS:
        options[letter] = question.correct if letter == correct else distractors.pop(0)
    return options, correct


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()
