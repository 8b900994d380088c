"""The conformance harness: clause registry, devices, results, pytest plugin."""
