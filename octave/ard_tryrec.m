function [packet, isnew] = ard_tryrec(p)
  % [PACKET, ISNEW] = ard_tryrec(P) returns the newest packet without waiting. ISNEW is true
  %   when it is newer than the last one P returned, false when it is the same packet again,
  %   and [] (with PACKET []) when nothing was ever sent on the connection.
  [packet, isnew] = ardnet_mex ('tryrec', p);
end
