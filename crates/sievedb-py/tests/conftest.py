import pytest

import sievedb


@pytest.fixture
def db(tmp_path):
    with sievedb.Db(tmp_path / "db") as d:
        yield d
