"""The card-reading shoe: wire codec, serial reader, simulated shoe.

- `protocol`: the wire format of hardware/shoe-protocol.md as a pure codec (frames with
  CRC-16/CCITT-FALSE and byte stuffing, a streaming `Decoder`, messages, the duplicate rule).
- `link`: the host's side of the protocol without I/O (`HostLink`): ACK/NAK, HELLO, heartbeat
  watchdog, duplicates across restarts.
- `serial_backend`: `ShoeReader`, a worker thread on a pyserial URL that reconnects by itself.
- `events`: what the driver reports (`CardRead`, `Misread`, `ShoeEvent`, `Connected`,
  `ShoeFault`, `FaultCleared`, `DamagedFrame`), each with a plain-words `message`.
- `simulated`: `SimulatedShoe` on a real pty with a fault menu; `simcli` is `tablectl sim-shoe`.

    with SimulatedShoe(parse_cards(["AS", "KD"]), link="/tmp/shoe") as shoe:
        with ShoeReader("/tmp/shoe", on_event=print):   # Connected(...), CardRead(AS), ...
            shoe.draw(2)
"""
