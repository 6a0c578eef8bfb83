"""The card-reading shoe: wire codec, serial reader, simulated shoe.

- `protocol`: the wire format of hardware/shoe-protocol.md as a pure codec (frames with
  CRC-16/CCITT-FALSE and byte stuffing, a streaming `Decoder`, messages, the duplicate rule).
- `link`: the host's side of the protocol without I/O (`HostLink`), a state machine whose
  phases, transitions and per-frame handling are tables (printed in hardware/shoe-protocol.md):
  ACK/NAK, HELLO, heartbeat watchdog, inter-byte timeout, duplicates across restarts.
- `serial_backend`: `ShoeReader`, a worker thread on a pyserial URL that reconnects by itself.
- `events`: what the driver reports (`CardRead`, `Misread`, `ShoeEvent`, `RefusedMessage`,
  `Connected`, `ShoeFault`, `FaultCleared`, `DamagedFrame`, `RepeatedFrame`), each with a
  plain-words `message`.
- `simulated`: `SimulatedShoe` on a real pty with a fault menu and named firmware bugs;
  `simcli` is `tablectl sim-shoe`.
- `conformance`: `tablectl shoe-check URL`, the conformance kit for a real shoe's firmware.

    with SimulatedShoe(parse_cards(["AS", "KD"]), link="/tmp/shoe") as shoe:
        with ShoeReader("/tmp/shoe", on_event=print):   # Connected(...), CardRead(AS), ...
            shoe.draw(2)
"""
