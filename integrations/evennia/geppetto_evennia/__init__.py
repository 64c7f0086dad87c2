"""geppetto-evennia: living NPCs for Evennia games, decided by geppetto (`geppetto serve` in
`game` completion mode) and carried out by the game."""
