def pytest_configure(config):
    config.addinivalue_line("markers", "fuzz: a short, time-bounded fuzz run (deselect with -m 'not fuzz')")
