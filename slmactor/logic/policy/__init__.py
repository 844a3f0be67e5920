"""Choices learned from outcomes: the Thompson-sampling bandit and its explanation (`bandit`,
`bandit_why`), Beta maths (`betamath`), change-point detection (`changepoint`), model calibration
(`calibration`), latency profiles (`latency`), the reward of a run (`reward`) and the policy
document (`document`).

May import: text.
"""
