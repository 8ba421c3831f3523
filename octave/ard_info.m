function info = ard_info(p)
  % INFO = ard_info(P): the packet last returned by ard_rec/ard_tryrec (IN) or last sent
  %   (OUT): seq (uint64, from 1), mono_ns and real_ns (int64, the writer's clocks at send),
  %   skipped (uint64, packets sent between the previous one returned and this one); and the
  %   port's name, connection, direction, type and size. Zeroes before the first packet.
  info = ardnet_mex ('info', p);
end
