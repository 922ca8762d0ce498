"""The contract suite: the same behavioural tests against FakeTestRunner and the real runner."""
