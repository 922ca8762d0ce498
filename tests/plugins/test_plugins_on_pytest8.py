"""The plugin matrix on the newest pytest 8 (the cases and checks are in plugin_matrix.py)."""

from tests.plugins.plugin_matrix import PluginMatrix


class TestPluginsOnPytest8(PluginMatrix):
    environment = "pytest8"
