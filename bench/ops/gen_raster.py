#!/usr/bin/python3
"""Write a classified land-cover-like GeoTIFF with a fixed seed (bench/ops/polygonize.sh).

Usage: gen_raster.py OUT.tif WIDTH HEIGHT [--seed S] [--cell PX] [--classes N] [--speckle P]

Classes 1..N in cells of about --cell pixels whose borders are jittered, plus single-pixel
speckle (fraction P of the pixels), and class 0 as nodata (about 1/(N+1) of the cells): many
regions cross window seams, some are large, most are small, as in classified imagery. Byte,
tiled 256x256, DEFLATE, EPSG:5070 (30 m pixels, as NLCD). Every value is a hash of the seed and
the pixel's position, so the raster is the same whatever the strip order or machine.
"""
import argparse

import numpy as np
from osgeo import gdal, osr

M = np.uint64(0xFFFFFFFFFFFFFFFF)


def mix(x):
    """splitmix64 finalizer on uint64 arrays."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def hash2(seed, a, b, salt):
    with np.errstate(over="ignore"):
        k = (np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(salt)) & M
        return mix(k ^ mix(a.astype(np.uint64) * np.uint64(0x632BE59BD9B4E019) + b.astype(np.uint64)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("width", type=int)
    p.add_argument("height", type=int)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--cell", type=int, default=48)
    p.add_argument("--classes", type=int, default=8)
    p.add_argument("--speckle", type=float, default=0.01)
    a = p.parse_args()
    drv = gdal.GetDriverByName("GTiff")
    ds = drv.Create(a.out, a.width, a.height, 1, gdal.GDT_Byte,
                    ["TILED=YES", "BLOCKXSIZE=256", "BLOCKYSIZE=256", "COMPRESS=DEFLATE",
                     "BIGTIFF=IF_SAFER"])
    ds.SetGeoTransform([-2361915.0, 30.0, 0.0, 3177735.0, 0.0, -30.0])
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(5070)
    ds.SetProjection(srs.ExportToWkt())
    band = ds.GetRasterBand(1)
    band.SetNoDataValue(0)
    jit = max(1, a.cell // 6)
    speckle = np.uint64(int(a.speckle * 2**32))
    for row in range(0, a.height, 256):
        h = min(256, a.height - row)
        y, x = np.mgrid[row:row + h, 0:a.width]
        # Jitter each pixel's position by a few pixels (in 4x4 patches) before finding its cell.
        jx = (hash2(a.seed, y // 4, x // 4, 1) % np.uint64(2 * jit + 1)).astype(np.int64) - jit
        jy = (hash2(a.seed, y // 4, x // 4, 2) % np.uint64(2 * jit + 1)).astype(np.int64) - jit
        cx = (x + jx) // a.cell
        cy = (y + jy) // a.cell
        cls = (hash2(a.seed, cy + 1000, cx + 1000, 3) % np.uint64(a.classes + 1)).astype(np.uint8)
        h4 = hash2(a.seed, y, x, 4)
        spot = (h4 & np.uint64(0xFFFFFFFF)) < speckle
        cls[spot] = (1 + (h4[spot] >> np.uint64(32)) % np.uint64(a.classes)).astype(np.uint8)
        band.WriteArray(cls, 0, row)
    ds.FlushCache()
    ds = None


if __name__ == "__main__":
    main()
