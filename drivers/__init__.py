"""The devices at the table, one module or package a device kind, each with a real and a
simulated backend chosen by a factory (shoe, base lamps and pin map, pole display, camera).
Drivers import nothing of the controller's but the card type (controller/engine/cards.py).
"""
