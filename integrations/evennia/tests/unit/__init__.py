"""Unit tests of geppetto-evennia with Evennia's test tooling (`evennia test`, SQLite, the
base classes of `evennia.utils.test_resources`): no geppetto service and no Redis. The bus is
`support.MemoryBus`, the package's own `Bus` with its Redis I/O replaced by lists.

Run them with `integrations/evennia/run-unit-tests`, which makes a throw-away game folder.
"""
