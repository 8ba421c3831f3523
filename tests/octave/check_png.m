function check_png(f, file)
  % Print figure f to the PNG file and check the result: the PNG signature, an image of at
  % least 200x200 pixels, and more than the background drawn.
  print (f, '-dpngcairo', file);
  fid = fopen (file, 'r');
  assert (fid >= 0, sprintf ('no file %s', file));
  magic = fread (fid, 8, 'uint8')';
  fclose (fid);
  assert (isequal (magic, [137 80 78 71 13 10 26 10]), sprintf ('%s is not a PNG', file));
  im = imread (file);
  assert (size (im, 1) >= 200 && size (im, 2) >= 200 && size (im, 3) == 3);
  px = reshape (im, [], 3);
  background = mode (double (px) * [65536; 256; 1]);
  drawn = sum (double (px) * [65536; 256; 1] ~= background);
  assert (drawn > 1000, sprintf ('%s: only %d pixels drawn', file, drawn));
  printf ('%s: %dx%d, %d pixels drawn\n', file, size (im, 2), size (im, 1), drawn);
end
