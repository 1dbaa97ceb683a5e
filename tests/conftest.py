"""Session-wide test setup: eight virtual CPU devices (read before the first backend use)."""

import os

os.environ.setdefault("TOOLKIT_NUM_CPU_DEVICES", "8")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
