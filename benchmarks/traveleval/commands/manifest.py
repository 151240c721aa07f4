"""The official data files at the pinned commit: path (relative to the TravelEval folder; the repository has them
under `environment/`) -> (bytes, sha256). Computed from a copy of that commit's files; `data fetch` checks every
download against it before anything is replaced."""

from __future__ import annotations

from collections.abc import Mapping

FILES: Mapping[str, tuple[int, str]] = {
    "data/queries/easy.json": (137711, "57566a026c81dbccf24180d2297e495d0477ed6538071c26cfbb8e80969b038c"),
    "data/queries/hard.json": (533900, "62f51e3a56d86daa901bc917e9ceac623060c3a6b9dc9da711b571c8acacbdd2"),
    "data/queries/medium.json": (411279, "b46658e3cab1cb2de38231653a1fbb2abdc4b10ab15e802f41bb5f9fe944c94a"),
    "data/queries/progressive.json": (153347, "fd38e4987fcf0608f41ec31b50b87310febffad0cd40367611babfa310148f66"),
    "database/accommodations/beijing/accommodations.csv":
        (74007, "b8d613ff4a4bf525f793f73a32c8fc2a04db3adb8e2d1e2b62a44ed0624b5b32"),
    "database/accommodations/chengdu/accommodations.csv":
        (74088, "604b9737e4da3991b18a234d7df7ccc80edc8708f78b134863935893e4e484c7"),
    "database/accommodations/chongqing/accommodations.csv":
        (71837, "b3e852e6dd56a55bcbd87e25ab390a7b1ec6c174dae48717d6e3bd2e8c646da2"),
    "database/accommodations/guangzhou/accommodations.csv":
        (72975, "9a5bcd5b26f8268c09d0fb0aaafa4e236859a7106ba6d7efd77481f373df9052"),
    "database/accommodations/hangzhou/accommodations.csv":
        (65591, "47e63d4b2832d62b7c4eab40471419add749bf92f9387cf3deee70594efe1e21"),
    "database/accommodations/nanjing/accommodations.csv":
        (67342, "3a5f9937c900a3cef7b0e61faa6806c09233f2f79608b4e24f7fda2b02c8b8c5"),
    "database/accommodations/shanghai/accommodations.csv":
        (73383, "bb5a16d31200d3bec1d3db9e4fed81749266a630bf6b97c0c6631f14273db096"),
    "database/accommodations/shenzhen/accommodations.csv":
        (86202, "ae21c943355e58623b31c5dbc338dd05a80c8208a3875e958fdef70fbc0f2060"),
    "database/accommodations/suzhou/accommodations.csv":
        (61492, "4f0d37ed6cb35b1ac26dcf06b51b16ba825abd418d8e089d014f22eae430a041"),
    "database/accommodations/wuhan/accommodations.csv":
        (75907, "c7adaaff3ad9f2a5e2b1e217ab2a6321adacd4fd76280e201ad5e216a80a7bdc"),
    "database/attractions/beijing/attractions.csv":
        (34092, "d696995f8a9ec08f29136d9710273ba1bd6008e7a29cea38afbf6fc907b1bb76"),
    "database/attractions/chengdu/attractions.csv":
        (35467, "6cf842ed615302709d7e8f636819009499f3f09fa3329118ebf789722c66607e"),
    "database/attractions/chongqing/attractions.csv":
        (36386, "e583f95cab34d8c2d543c8493262fa0e4a786082c1a763d93ee518f6df0734d4"),
    "database/attractions/guangzhou/attractions.csv":
        (34129, "3bf2d13d2f7ffdfaf73f61484700cf155258f8f4d94e9cc05c4b4cde38b17107"),
    "database/attractions/hangzhou/attractions.csv":
        (38353, "fa2d7b8bde56bf6572a473d02d5371c1f5d401789365f3b89fe677c4518f774d"),
    "database/attractions/nanjing/attractions.csv":
        (31788, "097717d80b7bdffe79394ef16510f1bc8f78bb562dda9e89fe134f6ebbb6c71d"),
    "database/attractions/shanghai/attractions.csv":
        (42961, "2ce63bec7c99194747c763e18d5901133b852a60a2a6538595c5ed0bf94b3c88"),
    "database/attractions/shenzhen/attractions.csv":
        (34757, "46c0f4c668641b7d953846db81fa8af524a2412f6e35d2a70d6a8b6fc0720d13"),
    "database/attractions/suzhou/attractions.csv":
        (40594, "af1f4817098e5e331562e70200a233514ab84b63bd18f81fea236697d657931d"),
    "database/attractions/wuhan/attractions.csv":
        (39168, "eedf2a89c437ca57458a5f9834515d011e40b795e14055ff04f5c8b6e812a876"),
    "database/categories.json": (2220, "ee7dccbb529c75c14b0f3ac42f1f4ece40a970e5c3632cf4063b432579eb7d4b"),
    "database/intercity_transport/airplane.jsonl":
        (285472, "a39ac221278128440dc11e33b6530f2f33e1d31de386441a2a7dcd3b6eeae66e"),
    "database/intercity_transport/train/from_上海_to_北京.json":
        (11668, "57cd8d19d290faa824ac4cc0e7e91e7578dac82141b888b0b61adb6a9dfa26a0"),
    "database/intercity_transport/train/from_上海_to_南京.json":
        (70003, "d614973b2712e0b17f89f90f10e5ef114d1c63ab943d2c335725421cf72ff82d"),
    "database/intercity_transport/train/from_上海_to_广州.json":
        (5597, "8bfca7af54279aada95f4a2e11ff45b8c0491b65dbb3ae660b8df9de12abc533"),
    "database/intercity_transport/train/from_上海_to_成都.json":
        (5149, "55508d61e4e90f570feb5c03faf57788e24cd285fc3ce30a2382eb33081bf946"),
    "database/intercity_transport/train/from_上海_to_杭州.json":
        (71542, "dce63a8463611c764a97ccadab2b281ffaefd0aac55640f9fc5718035b9e8bb8"),
    "database/intercity_transport/train/from_上海_to_武汉.json":
        (13623, "2b245e69ae7107a1f1c0e471d92d7d70f75b7f4215bbaaee96148e7e8b9e1df0"),
    "database/intercity_transport/train/from_上海_to_深圳.json":
        (5569, "dc3a9b7187d6e848bb49634bbde51a1563e8c232800f4f033ac8df26c8e4222c"),
    "database/intercity_transport/train/from_上海_to_苏州.json":
        (136123, "e6ccb74fc1501be001219dcfac1b2dfb663f83d446be08e2c6c35e1e652dfcdb"),
    "database/intercity_transport/train/from_上海_to_重庆.json":
        (5988, "05d4d8f50f2815445c819586e9a662ff0a4a06981bca22136602eb6d27652f6b"),
    "database/intercity_transport/train/from_北京_to_上海.json":
        (11460, "4a7ef7bbb0bf5e049cc63a5fb8745eca0105268d2aca3a3b4f6ac7470cbf8c26"),
    "database/intercity_transport/train/from_北京_to_南京.json":
        (15161, "5d751b81828a08a644b371a3110a92203ebe002d443dd4e0f282397fc5a18655"),
    "database/intercity_transport/train/from_北京_to_广州.json":
        (5504, "096f3c1f49a77dc25e1e133324a481828b3fa966db4801f96d7e51dc37a7ffa6"),
    "database/intercity_transport/train/from_北京_to_成都.json":
        (4069, "803e507a9287112fa57092c67b3347e7f7191fcc8cefb9b0eb056b54e8bb0cc9"),
    "database/intercity_transport/train/from_北京_to_杭州.json":
        (6493, "a3222ae2e37475f0ab4b8ed769a42fe7e221b1eece2091c8da5d0f5a0282dcf0"),
    "database/intercity_transport/train/from_北京_to_武汉.json":
        (13373, "ce14d3a1f5c9a6d076348990ff1963ae0d2a6ec1fcec94e3f91ae4de0d990d7f"),
    "database/intercity_transport/train/from_北京_to_深圳.json":
        (3671, "a1ed107bbc99de5a7b70e3ab14ce0e42683ba8f84d454d1bf20872deaf182523"),
    "database/intercity_transport/train/from_北京_to_苏州.json":
        (6705, "e3943fc33d0565840860837ac6c3ebdcf189233280e929992e75c79f2a8b1092"),
    "database/intercity_transport/train/from_北京_to_重庆.json":
        (4069, "4ddbc1b3d71b54d0d3c62bb78a7ace872c8e1505b29f2cd823c6a2430f29caad"),
    "database/intercity_transport/train/from_南京_to_上海.json":
        (68943, "c568ad26a4e3c4429d7595181bb2fa4ffecda047746b535a7144a622ec7f5a23"),
    "database/intercity_transport/train/from_南京_to_北京.json":
        (15159, "d015e50449f87abda99bbc53a2caa0301c84d3d06749706e85dd37afbeafce3c"),
    "database/intercity_transport/train/from_南京_to_广州.json":
        (3070, "1579e2629b246e0c03c73b26df3ef559b757db036c52b29f127a3a26f8b66e28"),
    "database/intercity_transport/train/from_南京_to_成都.json":
        (4078, "d2bad7d7c884c013c1c88982bdd6d3715ce28078227d4dc9d7bb307a8663f846"),
    "database/intercity_transport/train/from_南京_to_杭州.json":
        (30821, "6a17c7443c773788560ff4344ad6ec762457755b97cb51c3f0ba189ce819aa2e"),
    "database/intercity_transport/train/from_南京_to_武汉.json":
        (13487, "a923ec2bfe4177f698f35771928c90c972a4dc70b8698b34e0fb599de8dc4cea"),
    "database/intercity_transport/train/from_南京_to_深圳.json":
        (4052, "ace1fba0cb2aa67fbd49e6da4911558aad9cff1bc0ec399d2aa670416f9780df"),
    "database/intercity_transport/train/from_南京_to_苏州.json":
        (69150, "d952230feedaba0c1be8d7b1670eb00793e3e080c48443ddc6253e0be2852e06"),
    "database/intercity_transport/train/from_南京_to_重庆.json":
        (4686, "6417f0d4c1aa165de26b461344ca058b5f4683928a38e1ce286d8018978820a3"),
    "database/intercity_transport/train/from_广州_to_上海.json":
        (4556, "bce1f2344ffc457714e98a3195f56eb3d1b38ef658965bbb385992133aa9372f"),
    "database/intercity_transport/train/from_广州_to_北京.json":
        (5298, "2a1c7bdc1571b7feb4042b4ccc4ca935e59be6cae5fa1cd01ee76cc5a28d624e"),
    "database/intercity_transport/train/from_广州_to_南京.json":
        (2660, "46360986e951c2cec0f77a0777b88a900fe991a2b4054dcf0878425f433a7a11"),
    "database/intercity_transport/train/from_广州_to_成都.json":
        (5721, "ec20d04a4983cbba94f99c68f5354c8a9dd611e003cff090b759aeccf6f08500"),
    "database/intercity_transport/train/from_广州_to_杭州.json":
        (6562, "a5cb77ef2f10dbf682802f728ec57b3f1d5bb068e87f66cb8468165c50d7a68b"),
    "database/intercity_transport/train/from_广州_to_武汉.json":
        (26165, "10fd0a1fdc978b7b21f4f2a4851a3f79c44ddb06f8d2cbafc4f60f59d70e9faa"),
    "database/intercity_transport/train/from_广州_to_深圳.json":
        (103830, "e627214940bb662d5106feb80c94f47fb24431597bcbf73849f913daa5a247fa"),
    "database/intercity_transport/train/from_广州_to_苏州.json":
        (3298, "a9af0f8109c5059a9bb4d503643750332b16888502372c106b7d087d2a2871e6"),
    "database/intercity_transport/train/from_广州_to_重庆.json":
        (7950, "309058ef57796ded6070c240299dd75aab38092df81eed62bb6d1c76e4f965ae"),
    "database/intercity_transport/train/from_成都_to_上海.json":
        (4740, "69de8899e6830c3204796ce348e1a2baedc901908a2dd4657348140fe95ca696"),
    "database/intercity_transport/train/from_成都_to_北京.json":
        (3867, "820dc0fabb68d747727e929c7b584b4842d0a3de79bf65856d52479cd732a320"),
    "database/intercity_transport/train/from_成都_to_南京.json":
        (4078, "1bee484b2ae1cb583f38a147aca93563d4b076efcf76b177689857215877dcae"),
    "database/intercity_transport/train/from_成都_to_广州.json":
        (5511, "dab4e30c180b4d40fd8704546d9249b55fa5a6d838cf990b0b1851453cf75c63"),
    "database/intercity_transport/train/from_成都_to_杭州.json":
        (2452, "0aa08ce86ff4275d27d523f5b1a2519b4bb6b6e05ab2cdda8419d56ff89f8850"),
    "database/intercity_transport/train/from_成都_to_武汉.json":
        (7406, "3d97f662f85bb3a1398a0c0ec3748454d639f988636eaf6d8cdbd70e7be853f1"),
    "database/intercity_transport/train/from_成都_to_深圳.json":
        (2449, "16a6ceacf5f5669d09b848c045117a9e63fb60fd9fd5740c57a99fdcff074a4a"),
    "database/intercity_transport/train/from_成都_to_苏州.json":
        (4930, "c970110d571495258124e0a87c7d0cf530e235952ebf907c48570681684aeb7f"),
    "database/intercity_transport/train/from_成都_to_重庆.json":
        (31303, "ce84bf21cfc3f920cce22f74f26ca92f892c00464bdc1129c3e46c3bf26c0b33"),
    "database/intercity_transport/train/from_杭州_to_上海.json":
        (77948, "04ecbefc7e32fe3faa612c3fff9a84d965aab1275f0269d3fe758bb5c95c550e"),
    "database/intercity_transport/train/from_杭州_to_北京.json":
        (6277, "4fbf6e192ab291b21b6e46757aeac69fa6ecf972e215a94918047f379835ef04"),
    "database/intercity_transport/train/from_杭州_to_南京.json":
        (32231, "7a8164f154f9d876bbd64cfb8435863ae9eeaa17883ebf286cbbfefda6d46558"),
    "database/intercity_transport/train/from_杭州_to_广州.json":
        (5941, "672e1f500d83c4e6291ac0cb1ab5650bc9dba27aaeca0ff5c0c02876afaa0154"),
    "database/intercity_transport/train/from_杭州_to_成都.json":
        (2659, "6a5564e90e4bc668c15108aee8c421c4553860036bad322cd7bd20bab40c3553"),
    "database/intercity_transport/train/from_杭州_to_武汉.json":
        (7142, "e6872ba6b8d39df2b1676be993b402580e3525af936d0b1e2befbc293bad8f11"),
    "database/intercity_transport/train/from_杭州_to_深圳.json":
        (5713, "e9af05fbd0e345d5d6ef152a6750570a1fece709dc37c8318a821e9a7c93ba92"),
    "database/intercity_transport/train/from_杭州_to_苏州.json":
        (38994, "9818028084dad8c9313998362cdc9eb0850cbbf19b1c97840e1fd7282b72ba55"),
    "database/intercity_transport/train/from_杭州_to_重庆.json":
        (3467, "db245c854d146b709d40d901e25c98e64dd68059eb77cce566d96144df93b448"),
    "database/intercity_transport/train/from_武汉_to_上海.json":
        (13625, "3ec83a56b4b436f87881d98c1fdc95d30ef1b0a4f692e74998182044c1648b01"),
    "database/intercity_transport/train/from_武汉_to_北京.json":
        (13147, "b7cd1cede2383e463338e89785e5ba18da4d33c40f7b64bd5e1427dfa8b87d64"),
    "database/intercity_transport/train/from_武汉_to_南京.json":
        (14076, "32c898f0ddb4b1bc4a106206f07bbce723ee8dff3f60e3f8ecfd2dcc401d19cc"),
    "database/intercity_transport/train/from_武汉_to_广州.json":
        (25384, "377ec3fcb5b1b2be6e173a89ca310df8727b94df570334617d7a58e502511ae2"),
    "database/intercity_transport/train/from_武汉_to_成都.json":
        (7614, "df9269b7afba1d58fa36471d9ef33930bbc731f65f2f696096b08e258a9d8876"),
    "database/intercity_transport/train/from_武汉_to_杭州.json":
        (6116, "47ddb8f8953de0be37f77188742c8c8dc5e54a70d5858cd26e28d45305d9d09d"),
    "database/intercity_transport/train/from_武汉_to_深圳.json":
        (11085, "9cc61806ecbc309589e1a9788984960c7425d5ab2418f04ef89313973ed1bf94"),
    "database/intercity_transport/train/from_武汉_to_苏州.json":
        (14378, "505d3800a50d4e3f34f54e72ccc46260101655870c52efcaa99f9944742dc659"),
    "database/intercity_transport/train/from_武汉_to_重庆.json":
        (12128, "9c03a9cf3c37a944a4859dc151e5d3d8962d7e566008751d6837eaa8cfdd7964"),
    "database/intercity_transport/train/from_深圳_to_上海.json":
        (5358, "c91b8df160fd19202ba6aeb990dee23e359763d4a04036d9cf415529a9bbd38c"),
    "database/intercity_transport/train/from_深圳_to_北京.json":
        (3058, "c342dbb2a845596327ece24459697b7fbfb49cb261835b5d34c1be58a18b41c2"),
    "database/intercity_transport/train/from_深圳_to_南京.json":
        (4062, "2bd2d2688c7cfeb6319b80304f44cb49f8ba10e5659d1443187483f34073fac1"),
    "database/intercity_transport/train/from_深圳_to_广州.json":
        (101523, "3f8124fab3e4f8f182639118917347802256c7d753696b43a24044fcaab13be2"),
    "database/intercity_transport/train/from_深圳_to_成都.json":
        (2450, "9ceae88a9a99232c1af72ae9192ce2a6531dae52214d2110414474f735b56fe6"),
    "database/intercity_transport/train/from_深圳_to_杭州.json":
        (6732, "baedad3909333201b31be79466f1006e2760aea6c295c2d623bef1b666eddcf9"),
    "database/intercity_transport/train/from_深圳_to_武汉.json":
        (11288, "eedc83004ae341be1c98dc8b2ce4506481c9a943b2bf86b524b6ca703d1cd701"),
    "database/intercity_transport/train/from_深圳_to_苏州.json":
        (3684, "d5e0c4828f12665ef3d267a39fd3848922e0c377ebc0f01620768f9f714176d4"),
    "database/intercity_transport/train/from_深圳_to_重庆.json":
        (3056, "80722136c638dbbead2496166af096fc4a8be510bd9e8d3769e410826e58ee06"),
    "database/intercity_transport/train/from_苏州_to_上海.json":
        (144635, "4cd225ebff6d22d591c3ed92c8452a338a1e8609797b17f15853678290f7ca31"),
    "database/intercity_transport/train/from_苏州_to_北京.json":
        (6714, "b25391203344ff6fdb95675f81bfa9dabb9c50ccd61a94e6848b444b821d7556"),
    "database/intercity_transport/train/from_苏州_to_南京.json":
        (67517, "b54738a75465224755af81c095c71713b94e53f39648ca6617036433c536740d"),
    "database/intercity_transport/train/from_苏州_to_广州.json":
        (3095, "645cd370924ed6fabe1c856ac7575f0705bec5260c2f9d4ef23e7c5f4578ebcb"),
    "database/intercity_transport/train/from_苏州_to_成都.json":
        (4320, "0e1543c868fd8b8ee256f78c7eadf31ca400477bddf829cfe9e4e3f1af8e2299"),
    "database/intercity_transport/train/from_苏州_to_杭州.json":
        (40533, "d2ce25141112fd09e4d3307473edce3eee9bb50dc081e555a1e8e2a747414e48"),
    "database/intercity_transport/train/from_苏州_to_武汉.json":
        (13404, "35149802d0ab14b987325a4b4bf08b157e5fe73e0e2eb85c4e43d76ee55eb504"),
    "database/intercity_transport/train/from_苏州_to_深圳.json":
        (4321, "57674b91e8db13e951af1bfe325607024c81be72265aab91aa73322dcf3a2456"),
    "database/intercity_transport/train/from_苏州_to_重庆.json":
        (5785, "7678a8ef008f4325213aad3f9b5afb02ec7251796eebdb89c0b10864bb0ceff9"),
    "database/intercity_transport/train/from_重庆_to_上海.json":
        (5774, "7f60f606890c79da244649287d7054821ef458ceab1d7454520a0462689ac24d"),
    "database/intercity_transport/train/from_重庆_to_北京.json":
        (3856, "21c9b3d180b1a3d63a9bbe774d3643f9b780ea83c88751b6a14f6dcdce16c08c"),
    "database/intercity_transport/train/from_重庆_to_南京.json":
        (4892, "97d43b80ca7699f0d239b5405275f520cfc17182299c781410dd0c3b5667cd5f"),
    "database/intercity_transport/train/from_重庆_to_广州.json":
        (7335, "b19c640afd94200a7566b2cded586d4f48fcdce39daed11cf8d87b0dca8ef24b"),
    "database/intercity_transport/train/from_重庆_to_成都.json":
        (32138, "78637af8ffdb9c7fadf8ea35d79580ca218f73f27b5adcdc55ea674720a13f12"),
    "database/intercity_transport/train/from_重庆_to_杭州.json":
        (3058, "e98c4f289bb8942b9c02f7b680b5f2dadba174c95b4ddce2867b0c7bec1a2090"),
    "database/intercity_transport/train/from_重庆_to_武汉.json":
        (11920, "09055dc1ec38e9e7ab2529ef84dfa2b84a46399185a938b485626b93e246d153"),
    "database/intercity_transport/train/from_重庆_to_深圳.json":
        (3052, "b99e7c3427df51f738c6683d5b9ea65a7cecaa696188f095e5a3be69ca7a447a"),
    "database/intercity_transport/train/from_重庆_to_苏州.json":
        (5769, "2a52f52cffdacbb6044a21b4b65c6d99d2e08ae7be1e9606fc2ce280a74842d5"),
    "database/poi/beijing/poi.json": (153614, "5d3989ae57ddf83a5a5e7e16ca326b75fadaf9491003ff9921b6888998db19cd"),
    "database/poi/chengdu/poi.json": (153126, "d154de516459196f7e2ed9539fe6f3cab5ac4f978290904418ec506a43384734"),
    "database/poi/chongqing/poi.json": (150727, "c6cbbe57d5dba2c9d3381c4f2c4b9b8d396541f5c9c0e4d99e97829d46d91ceb"),
    "database/poi/guangzhou/poi.json": (157584, "0f24fbb105d797bb0050a62a8d9e021e82a00a7c73f06a09f0e87e19369c7cef"),
    "database/poi/hangzhou/poi.json": (153208, "2c92973d27d78b011e9cc94f9fb26b084e1a5ede008c5c278298096d7723ad6d"),
    "database/poi/nanjing/poi.json": (150154, "4878115a93ec0e6f3d138b3eac598a45cefee3e4ed665bcb588ca17a085be675"),
    "database/poi/shanghai/poi.json": (157781, "f4d5ae38ec8b38ccc8b7981430c574d89e8f704efbe8c62008db4121f1a20acb"),
    "database/poi/shenzhen/poi.json": (164890, "be0d113018cc742abe774588a218934df3a46e2fa91ac4edb7b80a77b8cf879d"),
    "database/poi/suzhou/poi.json": (146144, "93af82da2b0e584947f086a5c18d110f8a79368a27b2e0b0138935f8ad52c7a9"),
    "database/poi/wuhan/poi.json": (150435, "747ab584deba32b8b1fc7c2fa6fec48e6e8e02cea1b4bc00e964e23bc2074384"),
    "database/restaurants/beijing/restaurants_beijing.csv":
        (66963, "10defb24f5bcf2b989039f81ab6684e764e99407facef5924c8795282ff7ec35"),
    "database/restaurants/chengdu/restaurants_chengdu.csv":
        (71451, "68d0b7622d4209e5c2ab990c08719440b951e021e76e572b06ce88a120712a29"),
    "database/restaurants/chongqing/restaurants_chongqing.csv":
        (54091, "8943ec0c127443e0fd73d4312a24620ad4a057f8669fae9934b60a7c40c60d47"),
    "database/restaurants/guangzhou/restaurants_guangzhou.csv":
        (68531, "272a057221d6d581307716a89c25c70ea338cc278d7e4ea9645ecdbe6d2ff488"),
    "database/restaurants/hangzhou/restaurants_hangzhou.csv":
        (63529, "c490fc483c5032bf687db5228a026e247d8d1ddab27923ff9ebf531371f9fe37"),
    "database/restaurants/nanjing/restaurants_nanjing.csv":
        (57658, "1f77e32116cbadfca9b507e4651083547082cafa25a4ab8af345b75a140f6cf9"),
    "database/restaurants/shanghai/restaurants_shanghai.csv":
        (74975, "8bced44a18712454c111b52da3415bd7314767addb1db4bbef9e905a6f30979f"),
    "database/restaurants/shenzhen/restaurants_shenzhen.csv":
        (71314, "ed1a2f9ad31681802066482ba95ee9250263dcd1d18657257bce2a6d9f5a54d1"),
    "database/restaurants/suzhou/restaurants_suzhou.csv":
        (56470, "d9338c2f2cff2fb1883b9805338e7db92cd73f1ddd96d719d1e9c2dc6d96c53a"),
    "database/restaurants/wuhan/restaurants_wuhan.csv":
        (52316, "d87b8973efcbf8b7e9200baa921d1cf1598c1901b84277efe1ea4cb06a60d610"),
    "database/transportation/subways.json":
        (500531, "c6b5dc4ec63e806bcb4fff95c4842c3478be170ab9498486f19f94de11adb468"),
}
