# ruff: noqa  (a stand-in for NewtonBench's code: its shape is kept on purpose)
from modules.common.types import ExperimentSystem
