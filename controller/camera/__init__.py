"""The overhead camera at the table, whatever the game.

    watch.py  SceneWatch: the camera's settled view as the table holds it (rebuilt from `scene`
              entries), handing its meaning to the game's adapter (`GameAdapter.camera()`)
    feed.py   CameraFeed: the reading thread (vision.Reader + StableScene), posting the settled
              view when it changes
    process.py the camera's own process, where the camera and its CameraFeed run, and the table's
              handle on it (CameraProcess): views and statuses in, "recalibrate" and the
              simulated scene out
    plain.py  a layout's name and zoned seats read without vision, for the table's own checks
    sim.py    the simulated camera's hands: SimulatedDealer (the dealer moves chips as the game
              says) and SimScene (the API's handle for players and knocks)

Nothing here imports vision at load time: only the camera's process and the simulation touch it.
"""
