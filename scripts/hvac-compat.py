#!/usr/bin/python3
"""Runs hvac's own integration tests against a running Keywarden server.

hvac's test classes start a Vault binary of their own (tests/utils/server_manager.py) and ask it
its version. This runner points them at an already running server instead: every test class gets
a client for KEYWARDEN_ADDR with the token KEYWARDEN_TOKEN, and the version the tests compare
against is VAULT_VERSION_UNDER_TEST (default 1.19.0, the Vault API Keywarden speaks). Nothing of
hvac is kept in this repository: give it a checkout of hvac's tests.

Usage:
    KEYWARDEN_ADDR=http://127.0.0.1:8200 KEYWARDEN_TOKEN=hvs.… \\
        /usr/bin/python3 scripts/hvac-compat.py HVAC_CHECKOUT tests/integration_tests/api/auth_methods/test_approle.py …

A test may also be named by its dotted name (tests.integration_tests.v1.test_integration.IntegrationTest.test_userpass_auth).

It prints unittest's report and, last, one line "N passed, N failed"; the exit code is 0 only
when nothing failed. Run it with the Debian python3-hvac package, as a new user would.
"""
import os
import sys
import unittest


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    checkout, files = os.path.abspath(argv[1]), argv[2:]
    address = os.environ.get("KEYWARDEN_ADDR") or os.environ.get("VAULT_ADDR") or "http://127.0.0.1:8200"
    token = os.environ.get("KEYWARDEN_TOKEN") or os.environ.get("VAULT_TOKEN")
    if not token:
        print("set KEYWARDEN_TOKEN (or VAULT_TOKEN) to a root token of the server", file=sys.stderr)
        return 2
    sys.path.insert(0, checkout)

    import hvac
    from tests import utils
    from tests.utils import hvac_integration_test_case as base

    version = os.environ.get("VAULT_VERSION_UNDER_TEST", "1.19.0")
    utils.get_vault_version_string = lambda: version

    class RunningServer:
        """What the test classes use of hvac's ServerManager: a client and the root token."""

        def __init__(self):
            self.root_token = token
            self.client = hvac.Client(url=address, token=token)

    def set_up_class(cls):
        cls.manager = RunningServer()

    def tear_down_class(cls):
        pass

    base.HvacIntegrationTestCase.setUpClass = classmethod(set_up_class)
    base.HvacIntegrationTestCase.tearDownClass = classmethod(tear_down_class)

    loader = unittest.TestLoader()
    suite = unittest.TestSuite()
    for path in files:
        # A test file, or a dotted name of a module, class or test (tests.….TestClass.test_name).
        name = os.path.splitext(os.path.normpath(path))[0].replace(os.sep, ".") if path.endswith(".py") else path
        suite.addTests(loader.loadTestsFromName(name))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    failed = len(result.failures) + len(result.errors)
    passed = result.testsRun - failed - len(result.skipped)
    print(f"{passed} passed, {failed} failed, {len(result.skipped)} skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
