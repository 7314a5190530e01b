import pytest

# The conformance checks are library code that asserts: have pytest explain their failures.
pytest.register_assert_rewrite("runner.sandbox.conformance")
