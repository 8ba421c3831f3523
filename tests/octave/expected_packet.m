function p = expected_packet(k)
  % The values of packet k, as tests/octave/octblock.c's expected() makes them.
  p.k = uint32 (k);
  p.a = int8 (-mod (k, 100));
  p.b = uint8 (200 + mod (k, 50));
  p.c = int16 (-300 * mod (k, 100));
  p.d = uint16 (60000 + mod (k, 1000));
  p.e = int32 (-100000 * mod (k, 1000));
  p.f = uint32 (4000000000 + k);
  p.g = int64 (-5000000000000) * int64 (k);
  p.h = uint64 (2^63) + uint64 (k);
  p.x = single ([k / 4, -k / 8]);
  p.y = [k * 0.1, -k, k * k];
end
