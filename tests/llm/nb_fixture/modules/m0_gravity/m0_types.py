from modules.common.types import ExperimentSystem
