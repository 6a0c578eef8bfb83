"""High card: a fourth game added through the game adapter interface alone (a test fixture).

Each seat bets one wager; each seat and then the dealer get one card; a seat whose card is higher
than the dealer's wins even money, a lower one loses, the same rank pushes. Aces are high.
Registered from outside the product's tree: TABLECTL_GAMES="high-card=high_card" with this
folder's parent on PYTHONPATH.
"""
